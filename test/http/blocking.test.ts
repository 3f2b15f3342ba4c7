import { afterEach, describe, expect, it } from 'vitest';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

async function started(overrides = {}): Promise<TestServer> {
  server = await startTestServer(overrides);
  return server;
}

async function pendingId(s: TestServer): Promise<number> {
  // A fresh server's first create also loads the request validator: seconds on a busy machine.
  await eventually(() => s.test.waitingCount() > 0, 15_000, 'the blocking create to start waiting');
  const list = await call(s.url, 'GET', '/reviews?status=pending&page_size=1');
  return list.body.reviews[0].id;
}

describe('blocking POST /reviews', () => {
  it('answers 201 with the decision once a reviewer decides', async () => {
    const s = await started();
    const blocked = call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true });
    const id = await pendingId(s);

    const decided = await call(s.url, 'POST', `/reviews/${id}/decide`, {
      decision_type: 'modify',
      modified_action: 'Refund EUR 125.00',
      reviewer_name: 'dana',
    });
    const answer = await blocked;

    expect(decided.status).toBe(200);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ id, status: 'modified', decision: decided.body });
    expect(s.test.waitingCount()).toBe(0);
  });

  it('wakes every agent waiting on the same review', async () => {
    const s = await started();
    const review = (await call(s.url, 'POST', '/reviews', sampleReview)).body;
    const polls = [1, 2, 3].map(() => call(s.url, 'GET', `/reviews/${review.id}/decision?wait=60`));
    await eventually(() => s.test.waitingCount() === 3, 5_000, 'three long-polls');

    const decision = (await call(s.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' })).body;

    for (const poll of await Promise.all(polls)) expect(poll.body).toEqual(decision);
    expect(s.test.waitingCount()).toBe(0);
  });

  it('answers 408 after Prefer: wait=1 and leaves the review pending and retrievable', async () => {
    const s = await started();
    const startedAt = Date.now();
    const answer = await call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true }, { headers: { Prefer: 'wait=1' } });
    const elapsed = Date.now() - startedAt;

    expect(answer.status).toBe(408);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.headers.get('preference-applied')).toBe('wait=1');
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(answer.body).toMatchObject({ status: 408, review_id: expect.any(Number), review: { status: 'pending', decision: null } });
    const stored = await call(s.url, 'GET', `/reviews/${answer.body.review_id}`);
    expect(stored.body).toMatchObject({ status: 'pending', task_type: sampleReview.task_type });
    expect(s.test.waitingCount()).toBe(0);
  });

  it('honours blocking_timeout_seconds when the client states no preference', async () => {
    const s = await started({ blocking_timeout_seconds: 1 });
    const answer = await call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true });
    expect(answer.status).toBe(408);
    expect(answer.body.detail).toMatch(/no decision within 1 s/);
  });

  it('never waits longer than blocking_timeout_seconds, whatever Prefer asks', async () => {
    const s = await started({ blocking_timeout_seconds: 1 });
    const answer = await call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true }, { headers: { Prefer: 'wait=600' } });
    expect(answer.status).toBe(408);
    expect(answer.headers.get('preference-applied')).toBe('wait=1');
  });

  it('releases the waiter as soon as the client disconnects', async () => {
    const s = await started();
    const controller = new AbortController();
    const blocked = call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true }, { signal: controller.signal });
    const id = await pendingId(s);
    expect(s.test.waitingCount()).toBe(1);

    controller.abort();
    await expect(blocked).rejects.toThrow();
    await eventually(() => s.test.waitingCount() === 0, 5_000, 'the waiter to be released');

    // The review itself is kept: the agent can still come back for the decision.
    expect((await call(s.url, 'GET', `/reviews/${id}`)).body.status).toBe('pending');
  });

  it('answers waiting clients 503 with their review_id when the server shuts down', async () => {
    const s = await started();
    const blocked = call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true });
    const longPoll = pendingId(s).then((id) => ({ id, poll: call(s.url, 'GET', `/reviews/${id}/decision?wait=60`) }));
    const { id, poll } = await longPoll;
    await eventually(() => s.test.waitingCount() === 2, 5_000, 'both waiters');

    await s.close();

    const answer = await blocked;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.body).toMatchObject({ status: 503, review_id: id });
    expect((await poll).body).toMatchObject({ status: 503, review_id: id });
  });
});

describe('racing decisions', () => {
  it('lets exactly one of 50 concurrent decides win; the rest get 409 and one decision row exists', async () => {
    const s = await started();
    const review = (await call(s.url, 'POST', '/reviews', sampleReview)).body;
    const types = ['approve', 'reject', 'modify'] as const;

    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(s.url, 'POST', `/reviews/${review.id}/decide`, {
          decision_type: types[i % 3],
          modified_action: types[i % 3] === 'modify' ? `variant ${i}` : null,
          reviewer_name: `reviewer-${i}`,
        }),
      ),
    );

    const winners = answers.filter((a) => a.status === 200);
    const losers = answers.filter((a) => a.status === 409);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(49);
    for (const loser of losers) expect(loser.body.decision).toEqual(winners[0].body);
    const [rows] = await s.test.sequelize.query('SELECT COUNT(*) AS n FROM decisions WHERE review_id = ?', {
      replacements: [review.id],
    });
    expect(rows).toEqual([{ n: 1 }]);
  });
});
