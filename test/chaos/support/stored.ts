import fs from 'node:fs';
import path from 'node:path';
import type { ReviewRecord } from '../../../server/domain/reviews/records';
import { jsonOf, send } from '../../support/raw-http';

/** Every review `GET /reviews?<query>` lists, page after page, as a client would read them. */
export async function everyReviewListed(baseUrl: string, query: string): Promise<ReviewRecord[]> {
  const reviews: ReviewRecord[] = [];
  for (let page = 1; ; page += 1) {
    const list = jsonOf<{ reviews: ReviewRecord[]; total: number }>(await send(baseUrl, { method: 'GET', path: `/reviews?${query}&page_size=100&page=${page}` }))!;
    reviews.push(...list.reviews);
    if (list.reviews.length === 0 || reviews.length >= list.total) return reviews;
  }
}

/** Uploads whose files are still in the incoming directory: unfinished, or never cleaned up. */
export function partialUploads(dataDir: string): string[] {
  const incoming = path.join(dataDir, 'attachments', '.incoming');
  return fs.existsSync(incoming) ? fs.readdirSync(incoming) : [];
}
