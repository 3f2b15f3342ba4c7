import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { attachmentFilesOf, call, expectProblem, sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

// POST /reviews as multipart/form-data: a review filed with its files, stored together or not at all.

const MAX_BYTES = 64 * 1024;
const MAX_FILES = 3;
let server: TestServer;

beforeAll(async () => {
  // A rule that decides `tag` reviews at once: their files are still what they were decided on.
  const routing = compilePolicy({ rules: [{ name: 'auto-tag', priority: 100, conditions: { task_type: 'tag' }, auto_decide: 'approve' }] });
  server = await startTestServer({ max_attachment_bytes: MAX_BYTES, max_attachments_per_review: MAX_FILES, blocking_timeout_seconds: 60, routing });
});
afterAll(() => server.dispose());

interface FilePart {
  name: string;
  type: string;
  content: string | Buffer;
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

function formOf(review: unknown, files: FilePart[]): FormData {
  const form = new FormData();
  if (review !== undefined) form.append('review', typeof review === 'string' ? review : JSON.stringify(review));
  for (const file of files) form.append('file', new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)], { type: file.type }), file.name);
  return form;
}

async function createWithFiles(review: unknown, files: FilePart[], headers: Record<string, string> = {}, form = formOf(review, files)): Promise<Answer> {
  const response = await fetch(`${server.url}/reviews`, { method: 'POST', body: form, headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const filesOnDisk = (): string[] => attachmentFilesOf(server.dataDir);

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const SCREENSHOT: FilePart = { name: 'error.png', type: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) };
const DIFF: FilePart = { name: 'change.diff', type: 'text/x-diff', content: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n' };

/** The refused request stored nothing: no review, no file (not even a holding file). */
async function expectNothingStored(reviewsBefore: number, filesBefore: string[]): Promise<void> {
  expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
  expect(filesOnDisk()).toEqual(filesBefore);
}

describe('a review filed with its files (multipart POST /reviews)', () => {
  it('stores the review and its attachments together, lists them in the answer, and serves the bytes back', async () => {
    const created = await createWithFiles({ ...sampleReview, urgency: 'high', metadata: { order_id: 1042 } }, [SCREENSHOT, DIFF]);

    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/reviews/${created.body.id}`);
    expect(created.body).toMatchObject({ ...sampleReview, urgency: 'high', metadata: { order_id: 1042 }, status: 'pending', decision: null });
    expect(created.body.attachments).toEqual([
      expect.objectContaining({ review_id: created.body.id, file_name: 'error.png', content_type: 'image/png', size_bytes: 7, sha256: sha256(SCREENSHOT.content), description: null }),
      expect.objectContaining({ review_id: created.body.id, file_name: 'change.diff', content_type: 'text/x-diff', sha256: sha256(DIFF.content) }),
    ]);
    const listed = await call(server.url, 'GET', `/reviews/${created.body.id}/attachments`);
    expect(listed.body.attachments).toEqual(created.body.attachments);
    const download = await fetch(`${server.url}/attachments/${created.body.attachments[1].id}/download`);
    expect(await download.text()).toBe(DIFF.content);
    // A plain read of the review does not carry them; the attachments endpoint does.
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}`)).body).not.toHaveProperty('attachments');
  });

  it('takes a review part alone (no files) as a plain create', async () => {
    const created = await createWithFiles(sampleReview, []);
    expect(created.status).toBe(201);
    expect(created.body.attachments).toEqual([]);
  });

  it('waits, when blocking, for the decision, which a reviewer makes seeing the files, and answers it with them', async () => {
    const task = `blocking-${Date.now()}`;
    const waiting = createWithFiles({ ...sampleReview, task_type: task, blocking: true }, [SCREENSHOT]);
    let pending: any[] = [];
    await expect
      .poll(async () => (pending = (await call(server.url, 'GET', `/reviews?status=pending&task_type=${task}`)).body.reviews).length)
      .toBe(1);
    // The first moment a reviewer can see the review, its file is there.
    expect((await call(server.url, 'GET', `/reviews/${pending[0].id}/attachments`)).body.count).toBe(1);

    const decided = await call(server.url, 'POST', `/reviews/${pending[0].id}/decide`, { decision_type: 'approve', reviewer_name: 'dana' });
    expect(decided.status).toBe(200);

    const answer = await waiting;
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ id: pending[0].id, status: 'approved', decision: { decision_type: 'approve', reviewer_name: 'dana' } });
    expect(answer.body.attachments).toEqual([expect.objectContaining({ file_name: 'error.png', sha256: sha256(SCREENSHOT.content) })]);
  });

  it('keeps the files of a review a routing rule decides at once, and answers a blocking create with both', async () => {
    const answer = await createWithFiles({ task_type: 'tag', proposed_action: 'Tag ticket 7 as billing', blocking: true }, [SCREENSHOT]);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ status: 'approved', routing_rule: 'auto-tag', decision: { decision_type: 'approve' } });
    expect(answer.body.attachments).toEqual([expect.objectContaining({ file_name: 'error.png' })]);
  });

  it('answers a blocking create that ran out of time with 408, the review and its files', async () => {
    const answer = await createWithFiles({ ...sampleReview, blocking: true }, [DIFF], { Prefer: 'wait=1' });
    expectProblem(answer, 408);
    expect(answer.body.review.status).toBe('pending');
    expect(answer.body.review.attachments).toEqual([expect.objectContaining({ file_name: 'change.diff' })]);
  });

  describe('stores nothing when any part is refused', () => {
    it('an invalid field of the review: 400 naming it, and the files already received are removed', async () => {
      const [reviews, files] = [await storedReviewCount(server.url), filesOnDisk()];
      const refused = await createWithFiles({ ...sampleReview, confidence_score: 7 }, [SCREENSHOT, DIFF]);
      expectProblem(refused, 400, /review\.confidence_score/);
      expect(refused.body.errors).toEqual([{ field: 'review.confidence_score', message: expect.any(String) }]);
      await expectNothingStored(reviews, files);
    });

    it('an unknown field of the review, a review part that is not JSON or not an object, or none at all: 400', async () => {
      const [reviews, files] = [await storedReviewCount(server.url), filesOnDisk()];
      expectProblem(await createWithFiles({ ...sampleReview, colour: 'red' }, [DIFF]), 400, /review\.colour is not a known field/);
      expectProblem(await createWithFiles('{"task_type": "refund",', [DIFF]), 400, /review is not valid JSON/);
      expectProblem(await createWithFiles('[1, 2]', [DIFF]), 400, /review must be a JSON object/);
      expectProblem(await createWithFiles(undefined, [DIFF]), 400, /review is required/);
      const reviewAsFile = new FormData();
      reviewAsFile.append('review', new Blob([JSON.stringify(sampleReview)], { type: 'application/json' }), 'review.json');
      expectProblem(await createWithFiles(undefined, [], {}, reviewAsFile), 400, /review must be a text part/);
      await expectNothingStored(reviews, files);
    });

    it('a file larger than max_attachment_bytes: 413, the review not stored', async () => {
      const [reviews, files] = [await storedReviewCount(server.url), filesOnDisk()];
      const big: FilePart = { name: 'dump.bin', type: 'application/octet-stream', content: Buffer.alloc(MAX_BYTES + 1, 7) };
      expectProblem(await createWithFiles(sampleReview, [SCREENSHOT, big]), 413, /max_attachment_bytes/);
      await expectNothingStored(reviews, files);
    });

    it('more files than max_attachments_per_review: 413, the review not stored', async () => {
      const [reviews, files] = [await storedReviewCount(server.url), filesOnDisk()];
      const tooMany = Array.from({ length: MAX_FILES + 1 }, (_, index) => ({ ...DIFF, name: `part-${index}.diff` }));
      expectProblem(await createWithFiles(sampleReview, tooMany), 413, /at most 3 attachments \(max_attachments_per_review\)/);
      await expectNothingStored(reviews, files);
    });

    it('a part of another name: 400', async () => {
      const [reviews, files] = [await storedReviewCount(server.url), filesOnDisk()];
      const form = formOf(sampleReview, [DIFF]);
      form.append('screenshot', new Blob(['x']), 'x.png');
      expectProblem(await createWithFiles(undefined, [], {}, form), 400, /screenshot is not a known field/);
      await expectNothingStored(reviews, files);
    });
  });

  describe('with an Idempotency-Key', () => {
    it('re-attaches a repeat with the same review and files to the one review, keeping one set of files', async () => {
      const key = `files-${Date.now()}`;
      const first = await createWithFiles(sampleReview, [SCREENSHOT, DIFF], { 'Idempotency-Key': key });
      const files = filesOnDisk();
      const again = await createWithFiles(sampleReview, [SCREENSHOT, DIFF], { 'Idempotency-Key': key });

      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.attachments).toEqual(first.body.attachments);
      expect(filesOnDisk()).toEqual(files);
    });

    it('refuses the key with other files (422), and with the same review sent as JSON', async () => {
      const key = `other-files-${Date.now()}`;
      const first = await createWithFiles(sampleReview, [SCREENSHOT], { 'Idempotency-Key': key });
      expect(first.status).toBe(201);

      const otherFiles = await createWithFiles(sampleReview, [DIFF], { 'Idempotency-Key': key });
      expectProblem(otherFiles, 422);
      expect(otherFiles.body.review_id).toBe(first.body.id);
      expectProblem(await call(server.url, 'POST', '/reviews', sampleReview, { headers: { 'Idempotency-Key': key } }), 422);
    });
  });

  it('still refuses a urlencoded body on POST /reviews (415)', async () => {
    const response = await fetch(`${server.url}/reviews`, { method: 'POST', body: new URLSearchParams({ review: JSON.stringify(sampleReview) }) });
    expect(response.status).toBe(415);
  });
});
