import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from '../support/dashboard';
import { jsonRequest, type RawRequest, type RawResponse, send } from '../support/raw-http';
import { call, expectProblem, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-client-limit-tests-0123456789';
const INSTALLATION_KEY = 'installation-key-for-client-limits';
const PASSWORD = 'correct horse battery staple';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/**
 * A browser on a machine of its own. Every address of 127.0.0.0/8 is this machine's, so a
 * connection can come from 127.0.0.2 as well as from 127.0.0.1: two clients, told apart by
 * their address as two machines would be.
 */
class Client {
  private readonly agent: http.Agent;

  constructor(readonly address: string) {
    this.agent = new http.Agent({ localAddress: address });
  }

  send(baseUrl: string, request: RawRequest): Promise<RawResponse> {
    // Sign-ins sent at once wait their turn for scrypt on a loaded machine.
    return send(baseUrl, request, { agent: this.agent, timeoutMs: 60_000 });
  }

  close(): void {
    this.agent.destroy();
  }
}

const clients: Client[] = [];
function clientAt(address: string): Client {
  const client = new Client(address);
  clients.push(client);
  return client;
}
afterAll(() => clients.forEach((client) => client.close()));

const statuses = (answers: RawResponse[]): Record<number, number> =>
  answers.reduce<Record<number, number>>((counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

describe('signing in through the dashboard server', () => {
  let api: TestServer;
  let dashboard: TestDashboard;
  let email: string;

  beforeAll(async () => {
    // A clock that stands still: no failure is forgotten while the hashing takes its time.
    const now = Date.now();
    api = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { clock: () => now });
    dashboard = await startTestDashboard(api);
    const created = await call(api.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
    const invited = await call(api.url, 'POST', '/users', { email: 'dana@acme.example', name: 'Dana', role: 'reviewer' }, { headers: bearer(created.body.api_key.key) });
    const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
    expect((await call(api.url, 'POST', '/invitations/accept', { token, password: PASSWORD })).status).toBe(201);
    email = invited.body.email;
  });
  afterAll(async () => {
    await dashboard?.dispose();
    await api?.dispose();
  });

  const signIn = (client: Client, as: string, password: string): Promise<RawResponse> =>
    client.send(dashboard.url, jsonRequest('POST', '/api/sessions', { email: as, password }));

  it("a stranger's 40 failed sign-ins, sent at once, refuse the stranger past 30 and no one else", { timeout: 120_000 }, async () => {
    const stranger = clientAt('127.0.0.2');
    const attempts = Array.from({ length: 40 }, (_, guess) => signIn(stranger, `guess-${guess}@acme.example`, 'not the password at all'));
    expect(statuses(await Promise.all(attempts))).toEqual({ 401: 30, 429: 10 });
    expectProblem(await signIn(stranger, email, PASSWORD), 429, /too many failed sign-ins/);

    expect((await signIn(clientAt('127.0.0.3'), email, PASSWORD)).status).toBe(201);
  });

  it("a stranger's failures on one person's e-mail refuse the stranger, not the person signing in from elsewhere", async () => {
    const stranger = clientAt('127.0.0.4');
    const answers: number[] = [];
    for (let guess = 0; guess < 11; guess++) answers.push((await signIn(stranger, email, `guess number ${guess}`)).status);
    expect(answers).toEqual([...Array(10).fill(401), 429]);
    const refused = await signIn(stranger, email, PASSWORD);
    expectProblem(refused, 429, /too many failed sign-ins/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    expect((await signIn(clientAt('127.0.0.5'), email, PASSWORD)).status).toBe(201);
  });
});

describe('wrong API keys', () => {
  let api: TestServer;
  let dashboard: TestDashboard;

  beforeAll(async () => {
    api = await startTestServer({ enable_auth: true, api_key: INSTALLATION_KEY });
    dashboard = await startTestDashboard(api);
  });
  afterAll(async () => {
    await dashboard?.dispose();
    await api?.dispose();
  });

  /** Through a dashboard server (`/api/reviews`) or to the API itself (`/reviews`). */
  const listReviews = (client: Client, key: string, to = { url: dashboard.url, path: '/api/reviews' }, headers: Record<string, string> = {}): Promise<RawResponse> =>
    client.send(to.url, { method: 'GET', path: to.path, headers: { ...bearer(key), ...headers } });

  /** 31 wrong keys, each from an address of its own by the X-Forwarded-For it sends. */
  async function guessesNamingOthers(forger: Client, to: { url: string; path: string }): Promise<Record<number, number>> {
    const answers: RawResponse[] = [];
    for (let guess = 0; guess < 31; guess++) answers.push(await listReviews(forger, `guess-${guess}`, to, { 'x-forwarded-for': `198.51.100.${guess}` }));
    return statuses(answers);
  }

  it("40 from one browser refuse that browser's keys, the right one too, and not another browser's", async () => {
    const stranger = clientAt('127.0.0.6');
    const answers: RawResponse[] = [];
    for (let guess = 0; guess < 40; guess++) answers.push(await listReviews(stranger, `guess-${guess}`));
    expect(statuses(answers)).toEqual({ 401: 30, 429: 10 });
    // The installation key is chosen by a person: a guess that happens to be right must not get in either.
    expectProblem(await listReviews(stranger, INSTALLATION_KEY), 429, /too many wrong API keys/);

    expect((await listReviews(clientAt('127.0.0.7'), INSTALLATION_KEY)).status).toBe(200);
  });

  it('count against the sender when it names another client in X-Forwarded-For and is no trusted proxy', async () => {
    const untrusting = await startTestServer({ enable_auth: true, api_key: INSTALLATION_KEY, trusted_proxies: [] });
    try {
      expect(await guessesNamingOthers(clientAt('127.0.0.8'), { url: untrusting.url, path: '/reviews' })).toEqual({ 401: 30, 429: 1 });
    } finally {
      await untrusting.dispose();
    }
  });

  it('count against the browser when it names another client to a dashboard that does not trust it', async () => {
    const untrusting = await startTestDashboard(api, { trusted_proxies: ['192.0.2.1'] });
    try {
      expect(await guessesNamingOthers(clientAt('127.0.0.9'), { url: untrusting.url, path: '/api/reviews' })).toEqual({ 401: 30, 429: 1 });
      expect((await listReviews(clientAt('127.0.0.10'), INSTALLATION_KEY, { url: untrusting.url, path: '/api/reviews' })).status).toBe(200);
    } finally {
      await untrusting.dispose();
    }
  });
});

describe("the hosted edition's keys", () => {
  it("still open the API for a client over its wrong-key budget, being too random to guess; the operator's does not", async () => {
    const api = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    try {
      const created = await call(api.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
      const agents = clientAt('127.0.0.11');
      const listReviews = (key: string): Promise<RawResponse> => agents.send(api.url, { method: 'GET', path: '/reviews', headers: bearer(key) });
      for (let guess = 0; guess < 30; guess++) expect((await listReviews(`gl_stale-key-${guess}`)).status).toBe(401);
      expectProblem(await listReviews('gl_stale-key-30'), 429, /too many wrong API keys/);

      expect((await listReviews(created.body.api_key.key)).status).toBe(200);
      expectProblem(await listReviews(OPERATOR_KEY), 429);
    } finally {
      await api.dispose();
    }
  });
});

describe('the rate limit without authentication', () => {
  it('counts each browser behind the dashboard server on its own', async () => {
    const api = await startTestServer({ rate_limit_per_minute: 3 }, { clock: () => Date.parse('2026-11-24T10:00:00.000Z') });
    const dashboard = await startTestDashboard(api);
    try {
      const listReviews = (client: Client): Promise<RawResponse> => client.send(dashboard.url, { method: 'GET', path: '/api/reviews' });
      const busy = clientAt('127.0.0.12');
      const answers: RawResponse[] = [];
      for (let request = 0; request < 4; request++) answers.push(await listReviews(busy));
      expect(answers.map(({ status }) => status)).toEqual([200, 200, 200, 429]);
      expect((await listReviews(clientAt('127.0.0.13'))).status).toBe(200);
    } finally {
      await dashboard.dispose();
      await api.dispose();
    }
  });
});
