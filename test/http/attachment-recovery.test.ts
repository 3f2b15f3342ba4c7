import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { attach } from '../support/seed';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

it('removes at start-up the files of uploads whose transaction never committed, and keeps every attachment', async () => {
  const first = (server = await startTestServer());
  const review = (await call(first.url, 'POST', '/reviews', sampleReview)).body;
  const attachment = await attach(first.url, review.id, 'kept bytes', 'kept.txt', 'text/plain');
  await first.close();

  // What a kill between moving an upload into place and its COMMIT leaves behind.
  const reviewDir = path.join(first.dataDir, 'attachments', String(review.id));
  fs.writeFileSync(path.join(reviewDir, 'never-committed'), 'orphan');
  fs.mkdirSync(path.join(first.dataDir, 'attachments', '999'));
  fs.writeFileSync(path.join(first.dataDir, 'attachments', '999', 'never-committed-either'), 'orphan');

  const restarted = (server = await startTestServer({ data_dir: first.dataDir, database_url: first.config.database_url }));
  expect(fs.readdirSync(reviewDir)).toHaveLength(1);
  expect(fs.readdirSync(path.join(first.dataDir, 'attachments', '999'))).toEqual([]);
  const content = await fetch(`${restarted.url}/attachments/${attachment.id}/download`);
  expect(await content.text()).toBe('kept bytes');
});
