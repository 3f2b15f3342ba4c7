import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../../server/http/limits';
import { INSTALLATION } from '../../server/domain/shared/principal';
import { call, eventually, expectProblem, sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

/** `{ "a": { "a": … { "a": 1 } } }` with `levels` objects. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

describe('body limits', () => {
  it('refuses a body over 1 MiB with 413', async () => {
    const s = (server = await startTestServer());
    const answer = await call(s.url, 'POST', '/reviews', { ...sampleReview, agent_reasoning: 'x'.repeat(1024 * 1024) });
    expectProblem(answer, 413);
    expect(await storedReviewCount(s.url)).toBe(0);
  });

  it(`takes metadata nested to the limit and refuses it one level deeper, naming the field`, async () => {
    const s = (server = await startTestServer());
    // The body is level 1 and metadata level 2.
    const deepest = await call(s.url, 'POST', '/reviews', { ...sampleReview, metadata: nested(MAX_JSON_DEPTH - 1) });
    const deeper = await call(s.url, 'POST', '/reviews', { ...sampleReview, metadata: nested(MAX_JSON_DEPTH) });
    expect(deepest.status).toBe(201);
    expectProblem(deeper, 400);
    expect(deeper.body.errors).toEqual([{ field: 'metadata', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    expect(await storedReviewCount(s.url)).toBe(1);
  });

  it('refuses 100,000 levels of nesting with a 400, not a crash', async () => {
    const s = (server = await startTestServer());
    const text = `{"task_type":"x","proposed_action":"y","metadata":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const answer = await call(s.url, 'POST', '/reviews', undefined, { body: text, headers: { 'content-type': 'application/json' } });
    expectProblem(answer, 400);
    expect((await call(s.url, 'GET', '/health')).status).toBe(200);
  });

  it('refuses metadata with more keys and items than the limit', async () => {
    const s = (server = await startTestServer());
    const wide = Object.fromEntries(Array.from({ length: MAX_JSON_MEMBERS + 1 }, (_, i) => [`k${i}`, i]));
    const answer = await call(s.url, 'POST', '/reviews', { ...sampleReview, metadata: wide });
    expectProblem(answer, 400);
    expect(answer.body.errors[0].field).toBe('metadata');
    expect(await storedReviewCount(s.url)).toBe(0);
  });
});

describe('max_waiting_requests', () => {
  it('answers 503 with Retry-After past the limit, stores nothing for the refused request, and makes room again', async () => {
    const s = (server = await startTestServer({ max_waiting_requests: 2 }));
    const held = [1, 2].map(() => call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true }));
    await eventually(() => s.test.waitingCount() === 2, 5_000, 'two waiters');

    const refused = await call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true });
    expectProblem(refused, 503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await storedReviewCount(s.url)).toBe(2);
    const pending = (await call(s.url, 'GET', '/reviews?status=pending')).body.reviews as Array<{ id: number }>;
    const longPoll = await call(s.url, 'GET', `/reviews/${pending[0].id}/decision?wait=5`);
    expectProblem(longPoll, 503);
    // Asking without waiting is always served.
    expect((await call(s.url, 'POST', '/reviews', sampleReview)).status).toBe(201);

    await call(s.url, 'POST', `/reviews/${pending[0].id}/decide`, { decision_type: 'approve' });
    await eventually(() => s.test.waitingCount() === 1, 5_000, 'a waiter released');
    const admitted = call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true });
    await eventually(() => s.test.waitingCount() === 2, 5_000, 'the new waiter');
    for (const review of (await call(s.url, 'GET', '/reviews?status=pending')).body.reviews) {
      await call(s.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'reject' });
    }
    expect((await Promise.all([...held, admitted])).map((a) => a.status)).toEqual([201, 201, 201]);
  });
});

describe('rate_limit_per_minute', () => {
  it('is off by default', async () => {
    const s = (server = await startTestServer());
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(s.url, 'GET', '/stats')));
    expect(answers.every((a) => a.status === 200)).toBe(true);
  });

  it('answers 429 with Retry-After past the limit per caller, and leaves /health alone', async () => {
    const s = (server = await startTestServer({ rate_limit_per_minute: 3 }));
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await call(s.url, 'GET', '/stats')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await call(s.url, 'POST', '/reviews', sampleReview);
    expectProblem(limited, 429);
    // One token comes back every 20 s at three a minute.
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(20);
    expect((await call(s.url, 'GET', '/health')).status).toBe(200);
    expect(await s.test.reviews.reading.list(INSTALLATION, {}, 1, 1)).toMatchObject({ total: 0 });
  });
});

describe('a request that does not arrive in time', () => {
  it('is answered 408 with a problem document, whether its body stalls or nothing is sent at all', async () => {
    server = await startTestServer({}, { connectionLimits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } });
    const port = Number(new URL(server.url).port);
    const answerTo = (bytes: string): Promise<string> =>
      new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(received));
      });
    const stalledBody = 'POST /reviews HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"task_type":';
    for (const answer of await Promise.all([answerTo(stalledBody), answerTo('')])) {
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 408 [^]*\r\ncontent-type: application\/problem\+json\r\n/i);
      expect(JSON.parse(body)).toMatchObject({ status: 408, detail: expect.stringMatching(/did not arrive in time/) });
    }
  });
});
