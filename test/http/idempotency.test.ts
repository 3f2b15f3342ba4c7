import { afterEach, describe, expect, it } from 'vitest';
import { INSTALLATION, type Principal } from '../../server/domain/shared/principal';
import { call, eventually, sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

const HOUR_MS = 3_600_000;

function keyed(s: TestServer, key: string, body: unknown, headers: Record<string, string> = {}) {
  return call(s.url, 'POST', '/reviews', body, { headers: { 'idempotency-key': key, ...headers } });
}

describe('Idempotency-Key on POST /reviews', () => {
  it('answers a repeat with the same body with the original review, marked as replayed', async () => {
    const s = (server = await startTestServer());
    const first = await keyed(s, 'refund-1042', sampleReview);
    // The same fields in another order are the same request.
    const repeat = await keyed(s, 'refund-1042', { proposed_action: sampleReview.proposed_action, task_type: sampleReview.task_type });

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.headers.get('location')).toBe(`/reviews/${first.body.id}`);
    expect(repeat.body).toEqual(first.body);
    expect(await storedReviewCount(s.url)).toBe(1);
  });

  it('answers the review as it is now, decision included', async () => {
    const s = (server = await startTestServer());
    const first = await keyed(s, 'k', sampleReview);
    const decision = await call(s.url, 'POST', `/reviews/${first.body.id}/decide`, { decision_type: 'approve' });
    const repeat = await keyed(s, 'k', sampleReview);
    expect(repeat.body).toMatchObject({ id: first.body.id, status: 'approved', decision: decision.body });
  });

  it('refuses the same key with a different body (422) and names the review it made', async () => {
    const s = (server = await startTestServer());
    const first = await keyed(s, 'k', sampleReview);
    const other = await keyed(s, 'k', { ...sampleReview, urgency: 'critical' });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(other.body).toMatchObject({ status: 422, review_id: first.body.id, detail: expect.stringContaining('different request body') });
    expect(await storedReviewCount(s.url)).toBe(1);
  });

  it('makes one review of 20 parallel retries; the others are replays or told to retry', async () => {
    const s = (server = await startTestServer());
    const answers = await Promise.all(Array.from({ length: 20 }, () => keyed(s, 'burst', sampleReview)));
    const created = answers.filter((a) => a.status === 201);
    const busy = answers.filter((a) => a.status === 409);

    expect(created.length + busy.length).toBe(20);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const answer of busy) expect(answer.headers.get('retry-after')).toBe('1');
    expect(await storedReviewCount(s.url)).toBe(1);
  });

  it('re-attaches a retried blocking create to the first request’s wait', async () => {
    const s = (server = await startTestServer());
    const body = { ...sampleReview, blocking: true };
    const timedOut = await keyed(s, 'blocking', body, { prefer: 'wait=1' });
    expect(timedOut.status).toBe(408);

    const retry = keyed(s, 'blocking', body);
    await eventually(() => s.test.waitingCount() === 1, 5_000, 'the retry to wait');
    const decision = await call(s.url, 'POST', `/reviews/${timedOut.body.review_id}/decide`, { decision_type: 'reject', notes: 'no' });
    const answer = await retry;

    expect(answer.status).toBe(201);
    expect(answer.headers.get('idempotent-replayed')).toBe('true');
    expect(answer.body).toMatchObject({ id: timedOut.body.review_id, status: 'rejected', decision: decision.body });
    expect(await storedReviewCount(s.url)).toBe(1);
  });

  it('keeps keys across a restart and for 24 hours, then lets the key start afresh', async () => {
    let now = Date.UTC(2026, 10, 23, 12);
    const clock = () => now;
    const s = (server = await startTestServer({}, { clock }));
    const first = await keyed(s, 'daily', sampleReview);
    await s.close();

    const restarted = (server = await startTestServer({ data_dir: s.dataDir, database_url: s.config.database_url }, { clock }));
    now += 23 * HOUR_MS;
    expect((await keyed(restarted, 'daily', sampleReview)).body.id).toBe(first.body.id);

    now += 2 * HOUR_MS;
    const fresh = await keyed(restarted, 'daily', sampleReview);
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.id).not.toBe(first.body.id);
    // Now the key answers with the new review.
    expect((await keyed(restarted, 'daily', sampleReview)).body.id).toBe(fresh.body.id);
  });

  it('keeps keys apart per API key scope and leaves requests without a key alone', async () => {
    const s = (server = await startTestServer());
    const keyless = await Promise.all([call(s.url, 'POST', '/reviews', sampleReview), call(s.url, 'POST', '/reviews', sampleReview)]);
    expect(keyless[0].body.id).not.toBe(keyless[1].body.id);

    const shared = 'same-text';
    const original = await keyed(s, shared, sampleReview);
    // The same key text under another caller's scope is another key.
    const anotherKey: Principal = { kind: 'api_key', scope: INSTALLATION, id: 'b'.repeat(64) };
    const otherCaller = await s.test.reviews.submitting.submit(anotherKey, sampleReview, { idempotency: { key: shared, requestHash: 'x' } });
    expect(otherCaller).toMatchObject({ kind: 'stored', replayed: false });
    expect(otherCaller.kind === 'stored' && otherCaller.review.id).not.toBe(original.body.id);
  });

  it.each([
    ['empty', ''],
    ['with a space', 'two words'],
    ['too long', 'k'.repeat(256)],
  ])('refuses a key that is %s with a 400', async (_case, key) => {
    const s = (server = await startTestServer());
    const answer = await keyed(s, key, sampleReview);
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/idempotency-key/i);
    expect(await storedReviewCount(s.url)).toBe(0);
  });
});
