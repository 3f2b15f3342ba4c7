import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from '../support/dashboard';
import { jsonOf, jsonRequest, multipart, type RawRequest, type RawResponse, send } from '../support/raw-http';
import { attach } from '../support/seed';
import { call, eventually, expectProblem, reviewStatus, sampleReview, startTestServer, storedReviewCount, type TestServer } from '../support/server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.dispose());

/**
 * node:http rather than fetch: these requests must be free to name any Host (fetch always sends
 * the URL's) and to carry a body without a Content-Type (fetch adds text/plain).
 */
const toApi = (request: RawRequest): Promise<RawResponse> => send(server.url, request);

const JSON_TYPE = { 'content-type': 'application/json' };

const uploadBody = () => multipart({ file: new Blob(['the customer asked twice'], { type: 'text/plain' }) });

async function newReview(): Promise<number> {
  return (await call(server.url, 'POST', '/reviews', sampleReview)).body.id;
}

async function attachmentCount(reviewId: number): Promise<number> {
  return (await call(server.url, 'GET', `/reviews/${reviewId}/attachments`)).body.count;
}

const MCP_INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'protection-test', version: '1.0.0' } },
});

/** One request of each kind a rebinding page would try, with the status it gets when addressed properly. */
const HOST_CHECKED: Array<RawRequest & { served: number }> = [
  { method: 'GET', path: '/health', served: 200 },
  { method: 'GET', path: '/reviews', served: 200 },
  { ...jsonRequest('POST', '/reviews', sampleReview), served: 201 },
  { method: 'POST', path: '/mcp', headers: { ...JSON_TYPE, accept: 'application/json, text/event-stream' }, body: Buffer.from(MCP_INITIALIZE), served: 200 },
];

const withPort = (host: string): string => host.replace('{port}', String(server.port));

describe('requests addressed to a name other than this machine (DNS rebinding)', () => {
  it.each(['evil.example', 'evil.example:{port}', '127.0.0.1.evil.example:{port}', 'localhost.evil.example:{port}', 'evil.example:{port}@127.0.0.1'])(
    'refuses Host %s with 403 on every endpoint, /mcp and /health included, and stores nothing',
    async (host) => {
      const reviewsBefore = await storedReviewCount(server.url);
      const sessionsBefore = server.test.mcpSessions();
      for (const { served: _served, ...request } of HOST_CHECKED) {
        expectProblem(await toApi({ ...request, headers: { ...request.headers, host: withPort(host) } }), 403);
      }
      expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
      expect(server.test.mcpSessions()).toBe(sessionsBefore);
    },
  );

  it.each(['localhost:{port}', '127.0.0.1:{port}', '[::1]:{port}', '127.0.0.2:{port}', 'LOCALHOST:{port}', 'localhost'])('serves Host %s', async (host) => {
    const reviewsBefore = await storedReviewCount(server.url);
    for (const { served, ...request } of HOST_CHECKED) {
      const answer = await toApi({ ...request, headers: { ...request.headers, host: withPort(host) } });
      expect({ request: `${request.method} ${request.path}`, status: answer.status }).toEqual({ request: `${request.method} ${request.path}`, status: served });
    }
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore + 1);
  });
});

describe('writes from another site', () => {
  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Origin: https://evil.example', { origin: 'https://evil.example' }],
    ['Origin: http://127.0.0.1.evil.example:8000', { origin: 'http://127.0.0.1.evil.example:8000' }],
    // What sandboxed frames and file:// pages send.
    ['Origin: null', { origin: 'null' }],
    // Other pages on this machine: another local app's, or the dashboard's own, which reaches the API through its proxy.
    ['Origin: http://localhost:3000', { origin: 'http://localhost:3000' }],
    ['Origin: http://127.0.0.1:8501', { origin: 'http://127.0.0.1:8501' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site', origin: 'http://localhost:8501' }],
  ])('are refused with 403 when they carry %s, and change nothing', async (_label, from) => {
    const reviewId = await newReview();
    const reviewsBefore = await storedReviewCount(server.url);
    const upload = await uploadBody();
    const writes: RawRequest[] = [
      jsonRequest('POST', '/reviews', sampleReview),
      jsonRequest('POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve' }),
      { method: 'POST', path: `/reviews/${reviewId}/attachments`, ...upload },
    ];
    for (const write of writes) expectProblem(await toApi({ ...write, headers: { ...write.headers, ...from } }), 403);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
    expect(await reviewStatus(server.url, reviewId)).toBe('pending');
    expect(await attachmentCount(reviewId)).toBe(0);
  });

  it.each([
    ['http://127.0.0.1:{port}', '127.0.0.1:{port}'],
    ['http://localhost:{port}', 'localhost:{port}'],
    ['http://[::1]:{port}', '[::1]:{port}'],
  ])('are accepted from a page of the origin they address (%s)', async (origin, host) => {
    const from = { origin: withPort(origin), host: withPort(host), 'sec-fetch-site': 'same-origin' };
    const created = await toApi({ method: 'POST', path: '/reviews', headers: { ...JSON_TYPE, ...from }, body: Buffer.from(JSON.stringify(sampleReview)) });
    expect(created.status).toBe(201);
    const reviewId = jsonOf<{ id: number }>(created)!.id;
    const decided = await toApi({ method: 'POST', path: `/reviews/${reviewId}/decide`, headers: { ...JSON_TYPE, ...from }, body: Buffer.from(JSON.stringify({ decision_type: 'approve' })) });
    expect(decided.status).toBe(200);
    expect(await reviewStatus(server.url, reviewId)).toBe('approved');
  });

  it('still have their reads answered: a read changes nothing, and without CORS headers the browser keeps the answer from the page', async () => {
    const answer = await toApi({ method: 'GET', path: '/reviews', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } });
    expect(answer.status).toBe(200);
    expect(jsonOf<{ total: number }>(answer)!.total).toBe(await storedReviewCount(server.url));
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('bodies a web form can send', () => {
  it.each([
    ['application/x-www-form-urlencoded', async () => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('task_type=refund&proposed_action=Refund') })],
    // A text/plain form can be crafted to produce exactly this.
    ['text/plain holding valid JSON', async () => ({ headers: { 'content-type': 'text/plain' }, body: Buffer.from(JSON.stringify(sampleReview)) })],
    ['JSON without a Content-Type', async () => ({ headers: {}, body: Buffer.from(JSON.stringify(sampleReview)) })],
    ['nothing at all', async () => ({ headers: {}, body: Buffer.alloc(0) })],
  ])('are refused on POST /reviews with 415 when sent as %s, and create nothing', async (_label, encode) => {
    const reviewsBefore = await storedReviewCount(server.url);
    expectProblem(await toApi({ method: 'POST', path: '/reviews', ...(await encode()) }), 415);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
  });

  it("are refused on POST /reviews with 400 when a multipart form sends the review's fields as its own fields (a review with files sends them as JSON in `review`), and create nothing", async () => {
    const reviewsBefore = await storedReviewCount(server.url);
    expectProblem(await toApi({ method: 'POST', path: '/reviews', ...(await multipart(sampleReview)) }), 400, /task_type is not a known field/);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
  });

  it('are refused on a decision with 415 — multipart included, which only uploads and a review with its files take — and the review stays pending', async () => {
    const reviewId = await newReview();
    const decision = { decision_type: 'approve' };
    expectProblem(await toApi({ method: 'POST', path: `/reviews/${reviewId}/decide`, headers: { 'content-type': 'text/plain' }, body: Buffer.from(JSON.stringify(decision)) }), 415);
    expectProblem(await toApi({ method: 'POST', path: `/reviews/${reviewId}/decide`, ...(await multipart(decision)) }), 415);
    expect(await reviewStatus(server.url, reviewId)).toBe('pending');
  });

  it('are refused on /mcp with 415, and open no session', async () => {
    const sessionsBefore = server.test.mcpSessions();
    const textForm = { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' };
    expectProblem(await toApi({ method: 'POST', path: '/mcp', headers: textForm, body: Buffer.from(MCP_INITIALIZE) }), 415);
    expect(server.test.mcpSessions()).toBe(sessionsBefore);
  });

  it('leave uploads working: an attachment is accepted as multipart/form-data and only as that', async () => {
    const reviewId = await newReview();
    const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
    expectProblem(await toApi({ method: 'POST', path: `/reviews/${reviewId}/attachments`, headers: urlencoded, body: Buffer.from('file=notes') }), 415);
    expect(await attachmentCount(reviewId)).toBe(0);
    const uploaded = await toApi({ method: 'POST', path: `/reviews/${reviewId}/attachments`, ...(await uploadBody()) });
    expect(uploaded.status).toBe(201);
    expect(await attachmentCount(reviewId)).toBe(1);
  });

  it("leave agents' JSON working, charset parameter and all", async () => {
    const answer = await toApi({ method: 'POST', path: '/reviews', headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(sampleReview)) });
    expect(answer.status).toBe(201);
  });
});

const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': API_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-site',
  'cache-control': 'no-store',
};

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-allow-credentials'];

function headersOf(response: Response, names: string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));
}

function expectApiHeaders(response: Response): void {
  expect(headersOf(response, Object.keys(SECURITY_HEADERS))).toEqual(SECURITY_HEADERS);
  expect(headersOf(response, CORS_HEADERS)).toEqual(Object.fromEntries(CORS_HEADERS.map((name) => [name, null])));
}

describe('response headers', () => {
  it('every kind of API answer carries the security headers and no CORS header, a preflight included', async () => {
    const evil = { origin: 'https://evil.example' };
    const answers: Array<[string, Response, number]> = [
      ['a JSON list', await fetch(`${server.url}/reviews`, { headers: evil }), 200],
      ['a missing review', await fetch(`${server.url}/reviews/999999`, { headers: evil }), 404],
      ['a form body', await fetch(`${server.url}/reviews`, { method: 'POST', headers: { ...evil, 'content-type': 'text/plain' }, body: '{}' }), 403],
      ['a text body', await fetch(`${server.url}/reviews`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 415],
      [
        'a preflight',
        await fetch(`${server.url}/reviews`, {
          method: 'OPTIONS',
          headers: { ...evil, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        }),
        405,
      ],
    ];
    for (const [label, response, status] of answers) {
      expect({ label, status: response.status }).toEqual({ label, status });
      expectApiHeaders(response);
    }
  });

  it('an answer given after a wait carries them too: a blocking create timed out, a long-poll answered by its decision', async () => {
    const timedOut = await fetch(`${server.url}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'wait=1' },
      body: JSON.stringify({ ...sampleReview, blocking: true }),
    });
    expect(timedOut.status).toBe(408);
    expectApiHeaders(timedOut);
    const reviewId = await newReview();
    const poll = fetch(`${server.url}/reviews/${reviewId}/decision?wait=60`);
    await eventually(() => server.test.waitingCount() === 1, 5_000, 'the long-poll to wait');
    await call(server.url, 'POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve' });
    const decided = await poll;
    expect(decided.status).toBe(200);
    expectApiHeaders(decided);
  });

  it('a 401 from an API with authentication on carries them too', async () => {
    const guarded = await startTestServer({ enable_auth: true, api_key: 'k'.repeat(32) });
    try {
      const response = await fetch(`${guarded.url}/reviews`, { headers: { origin: 'http://localhost:3000' } });
      expect(response.status).toBe(401);
      expectApiHeaders(response);
    } finally {
      await guarded.dispose();
    }
  });

  it('the documentation page keeps a policy of its own that lets its scripts run, and no CORS header', async () => {
    const response = await fetch(`${server.url}/docs`, { headers: { origin: 'https://evil.example' } });
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy');
    expect(policy).not.toBe(API_POLICY);
    expect(policy).toContain("script-src 'self'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBeNull();
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    // Its static assets may be cached, unlike the API's answers.
    const bundle = await fetch(`${server.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=86400');
  });

  it('attachments are served in a sandbox of their own, except PDFs, which the browser viewer must render', async () => {
    const reviewId = await newReview();
    const download = async (content: string, type: string, fileName: string): Promise<Response> => {
      const uploaded = await attach(server.url, reviewId, content, fileName, type);
      return fetch(`${server.url}/attachments/${uploaded.id}/download`);
    };
    const text = await download('plain words', 'text/plain', 'notes.txt');
    expect(text.headers.get('content-security-policy')).toMatch(/^default-src 'none';.*\bsandbox$/);
    const pdf = await download('%PDF-1.4 small\n', 'application/pdf', 'invoice.pdf');
    expect(pdf.headers.get('content-security-policy')).toBeNull();
    for (const response of [text, pdf]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});

describe('the dashboard server', () => {
  let dashboard: TestDashboard;

  beforeAll(async () => {
    dashboard = await startTestDashboard(server, { dashboard_host: '127.0.0.1' });
  });
  afterAll(() => dashboard?.dispose());

  /** Sent to 127.0.0.1 even when the dashboard listens on every interface, whose URL names 0.0.0.0. */
  const createThroughDashboard = (port: number, headers: Record<string, string>): Promise<RawResponse> =>
    send(`http://127.0.0.1:${port}`, { method: 'POST', path: '/api/reviews', headers: { ...JSON_TYPE, ...headers }, body: Buffer.from(JSON.stringify(sampleReview)) });

  it('refuses requests addressed to another name before forwarding anything, and serves its own names', async () => {
    const reviewsBefore = await storedReviewCount(server.url);
    const rebound = { host: `evil.example:${dashboard.port}` };
    expectProblem(await send(dashboard.url, { method: 'GET', path: '/', headers: rebound }), 403);
    expectProblem(await send(dashboard.url, { method: 'GET', path: '/api/reviews', headers: rebound }), 403);
    expectProblem(await createThroughDashboard(dashboard.port, rebound), 403);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
    expect((await send(dashboard.url, { method: 'GET', path: '/', headers: { host: `localhost:${dashboard.port}` } })).status).toBe(200);
  });

  it('refuses writes to /api from another site and forwards those of its own pages', async () => {
    const reviewsBefore = await storedReviewCount(server.url);
    expectProblem(await createThroughDashboard(dashboard.port, { origin: 'https://evil.example' }), 403);
    expectProblem(await createThroughDashboard(dashboard.port, { 'sec-fetch-site': 'cross-site' }), 403);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
    const own = await createThroughDashboard(dashboard.port, { origin: `http://127.0.0.1:${dashboard.port}`, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(201);
    expect(await storedReviewCount(server.url)).toBe(reviewsBefore + 1);
  });

  it('open to the network, refuses writes from foreign pages, and forwards its own without Origin, which the API would judge against its own address', async () => {
    const networked = await startTestDashboard(server, {
      dashboard_host: '0.0.0.0',
      allow_unauthenticated_network: true,
      allowed_hosts: ['greenlight.lan'],
      public_url: 'https://review.example.com',
    });
    try {
      const reviewsBefore = await storedReviewCount(server.url);
      // Reached at 127.0.0.1: the request's Host is this machine's address, the page another.
      for (const origin of ['https://evil.example', `http://localhost:${networked.port}`, 'null']) {
        expectProblem(await createThroughDashboard(networked.port, { origin }), 403, /another site/);
      }
      expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
      const ownPages: Array<Record<string, string>> = [
        // The address a colleague's browser used.
        { origin: `http://192.0.2.10:${networked.port}`, host: `192.0.2.10:${networked.port}` },
        { origin: 'https://review.example.com' },
        { origin: 'http://greenlight.lan' },
      ];
      for (const page of ownPages) {
        const created = await createThroughDashboard(networked.port, { ...page, 'sec-fetch-site': 'same-origin' });
        expect({ page: page.origin, status: created.status }).toEqual({ page: page.origin, status: 201 });
      }
    } finally {
      await networked.dispose();
    }
  });

  it('open to the network in front of an API without a key, answers only its own names: a rebinding page stores nothing', async () => {
    const networked = await startTestDashboard(server, {
      dashboard_host: '0.0.0.0',
      allow_unauthenticated_network: true,
      allowed_hosts: ['greenlight.lan'],
    });
    try {
      const reviewsBefore = await storedReviewCount(server.url);
      const rebound = { host: `evil.example:${networked.port}` };
      expectProblem(await createThroughDashboard(networked.port, rebound), 403, /allowed_hosts/);
      expectProblem(await send(`http://127.0.0.1:${networked.port}`, { method: 'GET', path: '/api/reviews', headers: rebound }), 403);
      expect(await storedReviewCount(server.url)).toBe(reviewsBefore);
      for (const name of [os.hostname(), '192.0.2.10', '[2001:db8::1]', 'greenlight.lan', 'localhost']) {
        const created = await createThroughDashboard(networked.port, { host: `${name}:${networked.port}` });
        expect({ name, status: created.status }).toEqual({ name, status: 201 });
      }
    } finally {
      await networked.dispose();
    }
  });

  it('refuses to start on a non-loopback address with authentication off unless the risk is accepted', async () => {
    await expect(startTestDashboard(server, { dashboard_host: '0.0.0.0' })).rejects.toThrow(
      /dashboard_host is 0\.0\.0\.0, which other machines can reach, and enable_auth is false.*allow_unauthenticated_network/,
    );
  });
});

describe('an API open to the network', () => {
  it('refuses to start with authentication off unless the risk is accepted', async () => {
    await expect(startTestServer({ api_host: '0.0.0.0' })).rejects.toThrow(
      /api_host is 0\.0\.0\.0, which other machines can reach, and enable_auth is false.*allow_unauthenticated_network: true \(--allow-unauthenticated-network\)/,
    );
  });

  it('without a key (risk accepted) answers only its own names and addresses', async () => {
    const open = await startTestServer({ api_host: '0.0.0.0', allow_unauthenticated_network: true });
    try {
      const to = (host: string) => send(`http://127.0.0.1:${open.port}`, { ...jsonRequest('POST', '/reviews', sampleReview), headers: { ...JSON_TYPE, host } });
      expectProblem(await to(`evil.example:${open.port}`), 403);
      expect((await to(`${os.hostname()}:${open.port}`)).status).toBe(201);
      expect((await to(`192.0.2.10:${open.port}`)).status).toBe(201);
    } finally {
      await open.dispose();
    }
  });

  it('without a key refuses writes from foreign pages, and takes those of the origin addressed, public_url and allowed_hosts', async () => {
    const open = await startTestServer({ api_host: '0.0.0.0', allow_unauthenticated_network: true, allowed_hosts: ['greenlight.lan'], public_url: 'https://review.example.com' });
    try {
      const reachedAt = `http://127.0.0.1:${open.port}`;
      const create = (headers: Record<string, string>) => send(reachedAt, { ...jsonRequest('POST', '/reviews', sampleReview), headers: { ...JSON_TYPE, ...headers } });
      const reviewsBefore = await storedReviewCount(reachedAt);
      for (const origin of ['https://evil.example', 'http://localhost:3000', `http://192.0.2.10:${open.port}`, 'null']) {
        expectProblem(await create({ origin }), 403, /another site/);
      }
      expect(await storedReviewCount(reachedAt)).toBe(reviewsBefore);
      for (const origin of [`http://127.0.0.1:${open.port}`, 'https://review.example.com', 'http://greenlight.lan:8501']) {
        expect({ origin, status: (await create({ origin })).status }).toEqual({ origin, status: 201 });
      }
    } finally {
      await open.dispose();
    }
  });

  it('with a key answers any name (a rebinding page does not have the key), and still refuses writes from foreign pages', async () => {
    const key = 'open-network-test-key-0123456789';
    const open = await startTestServer({ api_host: '0.0.0.0', enable_auth: true, api_key: key });
    try {
      const create = (headers: Record<string, string>) =>
        send(`http://127.0.0.1:${open.port}`, { ...jsonRequest('POST', '/reviews', sampleReview), headers: { ...JSON_TYPE, authorization: `Bearer ${key}`, ...headers } });
      expect((await create({ host: `greenlight.example.com:${open.port}` })).status).toBe(201);
      expectProblem(await create({ origin: 'https://evil.example' }), 403, /another site/);
    } finally {
      await open.dispose();
    }
  });
});
