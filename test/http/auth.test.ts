import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, sampleReview, startTestServer, type TestServer } from '../support/server';

const KEY = 'test-key-0123456789abcdef';
let server: TestServer;
let reviewId: number;

beforeAll(async () => {
  server = await startTestServer({ enable_auth: true, api_key: KEY });
  reviewId = (await call(server.url, 'POST', '/reviews', sampleReview, { headers: { authorization: `Bearer ${KEY}` } })).body.id;
});
afterAll(() => server.dispose());

const protectedEndpoints = (): Array<[string, string, unknown?]> => [
  ['POST', '/reviews', sampleReview],
  ['GET', '/reviews'],
  ['GET', `/reviews/${reviewId}`],
  ['POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve' }],
  ['GET', `/reviews/${reviewId}/decision`],
  ['POST', `/reviews/${reviewId}/feedback`, { rating: 5 }],
  ['GET', `/reviews/${reviewId}/feedback`],
  ['GET', `/reviews/${reviewId}/attachments`],
  ['POST', `/reviews/${reviewId}/attachments`],
  ['GET', '/attachments/1'],
  ['GET', '/attachments/1/download'],
  ['DELETE', '/attachments/1'],
  ['GET', '/stats'],
  ['GET', '/events'],
  ['GET', '/no-such-path'],
];

describe('API key authentication', () => {
  it.each([
    ['no Authorization header', undefined, 'Bearer realm="greenlight"'],
    ['a wrong key', `Bearer ${KEY}x`, 'Bearer realm="greenlight", error="invalid_token"'],
    ['the key without the Bearer scheme', KEY, 'Bearer realm="greenlight"'],
    ['the key with another scheme', `Basic ${KEY}`, 'Bearer realm="greenlight"'],
    ['an empty Bearer', 'Bearer ', 'Bearer realm="greenlight"'],
  ])('refuses every protected endpoint with %s', async (_label, authorization, challenge) => {
    for (const [method, path, body] of protectedEndpoints()) {
      const response = await call(server.url, method, path, body, { headers: authorization ? { authorization } : {} });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(challenge);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // Nothing was decided or added by the refused requests.
    const review = await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: { authorization: `Bearer ${KEY}` } });
    expect(review.body.status).toBe('pending');
  });

  it('lets the right key through, whatever the case of the scheme', async () => {
    for (const authorization of [`Bearer ${KEY}`, `bearer ${KEY}`]) {
      const response = await call(server.url, 'GET', '/reviews', undefined, { headers: { authorization } });
      expect(response.status).toBe(200);
    }
  });

  it.each(['/health', '/openapi.json', '/docs', '/redoc', '/docs/swagger-ui-bundle.js'])('keeps %s open', async (path) => {
    const response = await fetch(`${server.url}${path}`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });
});

describe('wrong keys from one address', () => {
  it('are refused with 429 past the 30th in a burst, whatever key comes next, until the address has waited', async () => {
    let now = Date.parse('2026-11-24T10:00:00.000Z');
    const guarded = await startTestServer({ enable_auth: true, api_key: KEY }, { clock: () => now });
    try {
      const attempt = (key: string) => call(guarded.url, 'GET', '/reviews', undefined, { headers: { authorization: `Bearer ${key}` } });
      for (let guess = 0; guess < 30; guess++) expect((await attempt(`guess-${guess}`)).status).toBe(401);
      const refused = await attempt('guess-30');
      expectProblem(refused, 429, /too many wrong API keys from this address; retry in 6 s/);
      expect(refused.headers.get('retry-after')).toBe('6');
      // Not even the right key gets in while the address is refused: a guess that happens to be right would.
      expect((await attempt(KEY)).status).toBe(429);
      now += 6_000;
      expect((await attempt(KEY)).status).toBe(200);
      expect((await attempt('guess-31')).status).toBe(401);
      expect((await attempt('guess-32')).status).toBe(429);
    } finally {
      await guarded.dispose();
    }
  });

  it('do not count when no key is sent: a dashboard asks for one after its first 401s', async () => {
    const guarded = await startTestServer({ enable_auth: true, api_key: KEY });
    try {
      for (let request = 0; request < 40; request++) expect((await call(guarded.url, 'GET', '/reviews')).status).toBe(401);
      expect((await call(guarded.url, 'GET', '/reviews', undefined, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
    } finally {
      await guarded.dispose();
    }
  });
});
