import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from '../support/dashboard';
import { jsonRequest, type RawRequest, send } from '../support/raw-http';
import { sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

let api: TestServer;
let dashboard: TestDashboard;

beforeAll(async () => {
  api = await startTestServer();
  dashboard = await startTestDashboard(api);
});
afterAll(async () => {
  await dashboard?.dispose();
  await api?.dispose();
});

const big = (bytes: number): Buffer => Buffer.from(JSON.stringify({ ...sampleReview, proposed_action: 'x'.repeat(bytes) }));

/** Bodies the API refuses before reading them to the end. */
const REFUSED: Array<[string, RawRequest, number]> = [
  ['a JSON body past 1 MiB', { method: 'POST', path: '/api/reviews', headers: { 'content-type': 'application/json' }, body: big(3 * 1024 * 1024) }, 413],
  ['a large text/plain body', { method: 'POST', path: '/api/reviews', headers: { 'content-type': 'text/plain' }, body: big(512 * 1024) }, 415],
  ['a large upload to a review that does not exist', { method: 'POST', path: '/api/reviews/999999/attachments', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: Buffer.alloc(2 * 1024 * 1024, 0x61) }, 404],
];

describe('the dashboard forwarding a body the API refuses early', () => {
  it.each(REFUSED)('answers %s, then serves the next request on the same connection', async (_what, request, status) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await storedReviewCount(api.url);
      expect((await send(dashboard.url, request, { agent })).status).toBe(status);
      const next = await send(dashboard.url, jsonRequest('POST', '/api/reviews', sampleReview), { agent });
      expect(next.status).toBe(201);
      expect(await storedReviewCount(api.url)).toBe(before + 1);
    } finally {
      agent.destroy();
    }
  });
});
