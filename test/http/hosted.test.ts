import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, eventually, expectProblem, sampleReview, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-0123456789abcdef-0123456789';
const operator = { authorization: `Bearer ${OPERATOR_KEY}` };
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Tenant {
  id: number;
  admin: Record<string, string>;
  agent: Record<string, string>;
  agentKeyId: number;
  /** A person of the organization who may decide: an admin key decides in their name. */
  reviewerId: number;
}

let server: TestServer;
let acme: Tenant;
let globex: Tenant;

/** An organization made by the operator, with an agent key made by its admin key. */
async function tenant(name: string): Promise<Tenant> {
  const created = await call(server.url, 'POST', '/organizations', { name }, { headers: operator });
  expect(created.status).toBe(201);
  const admin = bearer(created.body.api_key.key);
  const agentKey = await call(server.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'refund agent', scope: 'agent' }, { headers: admin });
  expect(agentKey.status).toBe(201);
  const reviewer = await call(server.url, 'POST', '/users', { email: `reviewer@${name.toLowerCase()}.example`, name: `${name} Reviewer`, role: 'reviewer' }, { headers: admin });
  expect(reviewer.status).toBe(201);
  return { id: created.body.organization.id, admin, agent: bearer(agentKey.body.key), agentKeyId: agentKey.body.id, reviewerId: reviewer.body.id };
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  acme = await tenant('Acme');
  globex = await tenant('Globex');
});
afterAll(() => server?.dispose());

describe('the hosted edition: organizations and their API keys', () => {
  it('lets only the operator create an organization, and shows its first admin key once', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Initech', settings: { region: 'eu' } }, { headers: operator });
    expect(created.status).toBe(201);
    expect(created.body.organization).toMatchObject({ name: 'Initech', settings: { region: 'eu' } });
    expect(created.body.api_key).toMatchObject({ scope: 'admin', organization_id: created.body.organization.id, revoked_at: null });
    expect(created.body.api_key.key).toMatch(/^gl_[A-Za-z0-9_-]{40,}$/);
    expect(created.body.api_key.key.startsWith(created.body.api_key.prefix)).toBe(true);

    const listed = await call(server.url, 'GET', `/organizations/${created.body.organization.id}/api-keys`, undefined, { headers: bearer(created.body.api_key.key) });
    expect(listed.body.count).toBe(1);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key.key.slice(created.body.api_key.prefix.length));

    expectProblem(await call(server.url, 'POST', '/organizations', { name: 'Not by an admin' }, { headers: acme.admin }), 403, /operator/);
    expectProblem(await call(server.url, 'POST', '/organizations', { name: 'Not by an agent' }, { headers: acme.agent }), 403, /operator/);
  });

  it('answers 401 with WWW-Authenticate for a missing, unknown or made-up key', async () => {
    for (const headers of [{}, bearer('gl_not-a-key-of-anyone'), bearer('something-else-entirely')]) {
      const answer = await call(server.url, 'GET', '/reviews', undefined, { headers });
      expectProblem(answer, 401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect((await call(server.url, 'GET', '/health')).status).toBe(200);
  });

  it('keeps the operator key to creating organizations', async () => {
    expectProblem(await call(server.url, 'GET', '/reviews', undefined, { headers: operator }), 403, /operator key only creates organizations/);
    expectProblem(await call(server.url, 'GET', `/organizations/${acme.id}`, undefined, { headers: operator }), 403);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const mcpHeaders = { accept: 'application/json, text/event-stream' };
    expectProblem(await call(server.url, 'POST', '/mcp', initialize, { headers: { ...operator, ...mcpHeaders } }), 403, /operator key only creates organizations/);
    const opened = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...acme.agent, ...mcpHeaders, 'content-type': 'application/json' },
      body: JSON.stringify(initialize),
    });
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
  });

  it("lets an agent key file and read its organization's reviews but never decide them", async () => {
    const created = await call(server.url, 'POST', '/reviews', sampleReview, { headers: acme.agent });
    expect(created.status).toBe(201);
    expect(created.body.organization_id).toBe(acme.id);
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}`, undefined, { headers: acme.agent })).status).toBe(200);
    expectProblem(await call(server.url, 'POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve' }, { headers: acme.agent }), 403, /person/);
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}/decision`, undefined, { headers: acme.agent })).body).toBeNull();

    const decided = await call(server.url, 'POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve', reviewer_id: acme.reviewerId }, { headers: acme.admin });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ reviewer_id: acme.reviewerId, reviewer_name: 'Acme Reviewer' });
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}/decision`, undefined, { headers: acme.agent })).body.decision_type).toBe('approve');
  });

  it("keeps an agent key out of the organization's settings and keys", async () => {
    expectProblem(await call(server.url, 'GET', `/organizations/${acme.id}`, undefined, { headers: acme.agent }), 403, /admin/);
    expectProblem(await call(server.url, 'GET', `/organizations/${acme.id}/api-keys`, undefined, { headers: acme.agent }), 403, /admin/);
    expectProblem(await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'x', scope: 'admin' }, { headers: acme.agent }), 403, /admin/);
  });

  it('lets an admin rename the organization and replace its settings', async () => {
    const renamed = await call(server.url, 'PATCH', `/organizations/${acme.id}`, { name: 'Acme Corp', settings: { require_two_approvals: false } }, { headers: acme.admin });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: acme.id, name: 'Acme Corp', settings: { require_two_approvals: false } });
    expect((await call(server.url, 'GET', `/organizations/${acme.id}`, undefined, { headers: acme.admin })).body.name).toBe('Acme Corp');
    expectProblem(await call(server.url, 'PATCH', `/organizations/${acme.id}`, {}, { headers: acme.admin }), 400);
    expectProblem(await call(server.url, 'PATCH', `/organizations/${acme.id}`, { owner: 'me' }, { headers: acme.admin }), 400);
  });

  it('keeps settings it does not read as they are, and refuses a known one of the wrong type', async () => {
    const settings = { require_two_approvals: true, region: 'eu', escalation: { after_minutes: 30 } };
    expect((await call(server.url, 'PATCH', `/organizations/${globex.id}`, { settings }, { headers: globex.admin })).body.settings).toEqual(settings);
    expect((await call(server.url, 'GET', `/organizations/${globex.id}`, undefined, { headers: globex.admin })).body.settings).toEqual(settings);
    expectProblem(await call(server.url, 'PATCH', `/organizations/${globex.id}`, { settings: { require_two_approvals: 'yes' } }, { headers: globex.admin }), 400, /require_two_approvals/);
    await call(server.url, 'PATCH', `/organizations/${globex.id}`, { settings: {} }, { headers: globex.admin });
  });

  it('notes when a key was last used', async () => {
    await call(server.url, 'GET', '/reviews', undefined, { headers: globex.agent });
    const keys = (await call(server.url, 'GET', `/organizations/${globex.id}/api-keys`, undefined, { headers: globex.admin })).body.api_keys;
    const agentKey = keys.find((key: { id: number }) => key.id === globex.agentKeyId);
    expect(Date.parse(agentKey.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('the hosted edition: one organization never reaches another', () => {
  let acmeReview: number;
  let globexReview: number;

  beforeAll(async () => {
    acmeReview = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'Acme refund' }, { headers: acme.agent })).body.id;
    globexReview = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'Globex refund' }, { headers: globex.agent })).body.id;
  });

  it("answers 404 for every record of the other organization, and leaves it untouched", async () => {
    const refused: Array<[string, string, unknown?]> = [
      ['GET', `/reviews/${globexReview}`],
      ['GET', `/reviews/${globexReview}/decision`],
      ['POST', `/reviews/${globexReview}/decide`, { decision_type: 'reject', reviewer_id: acme.reviewerId }],
      ['GET', `/reviews/${globexReview}/feedback`],
      ['POST', `/reviews/${globexReview}/feedback`, { rating: 1 }],
      ['GET', `/reviews/${globexReview}/attachments`],
      ['GET', `/organizations/${globex.id}`],
      ['PATCH', `/organizations/${globex.id}`, { name: 'Taken over' }],
      ['GET', `/organizations/${globex.id}/api-keys`],
      ['POST', `/organizations/${globex.id}/api-keys`, { name: 'backdoor', scope: 'admin' }],
      ['DELETE', `/api-keys/${globex.agentKeyId}`],
      ['POST', '/reviews', { ...sampleReview, organization_id: globex.id }],
      ['GET', `/stats?organization_id=${globex.id}`],
    ];
    for (const [method, path, body] of refused) expectProblem(await call(server.url, method, path, body, { headers: acme.admin }), 404);

    const untouched = await call(server.url, 'GET', `/reviews/${globexReview}`, undefined, { headers: globex.admin });
    expect(untouched.body).toMatchObject({ status: 'pending', decision: null });
    expect((await call(server.url, 'GET', `/reviews/${globexReview}/feedback`, undefined, { headers: globex.admin })).body.count).toBe(0);
    expect((await call(server.url, 'GET', '/reviews', undefined, { headers: globex.agent })).status).toBe(200);
  });

  it('lists and counts only its own reviews', async () => {
    const acmeList = (await call(server.url, 'GET', '/reviews?page_size=100', undefined, { headers: acme.admin })).body;
    expect(acmeList.reviews.every((review: { organization_id: number }) => review.organization_id === acme.id)).toBe(true);
    expect(acmeList.reviews.map((review: { id: number }) => review.id)).toContain(acmeReview);
    const acmeStats = (await call(server.url, 'GET', '/stats', undefined, { headers: acme.admin })).body;
    expect(acmeStats.total_reviews).toBe(acmeList.total);
  });

  it("streams only its own organization's events", async () => {
    const received: string[] = [];
    const stream = http.get(`${server.url}/events`, { headers: acme.admin }, (response) => response.on('data', (chunk: Buffer) => received.push(chunk.toString())));
    try {
      await eventually(() => received.join('').includes(': connected'), 5_000, 'the stream to open');
      await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'Globex secret' }, { headers: globex.agent });
      await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'Acme news' }, { headers: acme.agent });
      await eventually(() => received.join('').includes('Acme news'), 5_000, "its own organization's event");
      expect(received.join('')).not.toContain('Globex secret');
    } finally {
      stream.destroy();
    }
  });
});

describe('registered agents', () => {
  it("names a review's agent: one of the organization's own, or 404", async () => {
    const registered = await call(server.url, 'POST', '/agents', { name: 'refund-bot', framework: 'langchain', metadata: { team: 'support' } }, { headers: acme.admin });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ organization_id: acme.id, name: 'refund-bot', framework: 'langchain', description: null, metadata: { team: 'support' } });
    const listed = await call(server.url, 'GET', '/agents', undefined, { headers: acme.agent });
    expect(listed.body.agents.map((agent: { id: number }) => agent.id)).toContain(registered.body.id);
    expectProblem(await call(server.url, 'POST', '/agents', { name: 'not mine to add' }, { headers: acme.agent }), 403);
    expectProblem(await call(server.url, 'GET', `/agents/${registered.body.id}`, undefined, { headers: globex.admin }), 404);

    // A registered agent is known by its registered name, whatever the request calls it.
    const filed = await call(server.url, 'POST', '/reviews', { ...sampleReview, agent_id: registered.body.id, agent_name: 'someone else' }, { headers: acme.agent });
    expect(filed.status).toBe(201);
    expect(filed.body).toMatchObject({ agent_id: registered.body.id, agent_name: 'refund-bot' });
    expect((await call(server.url, 'GET', `/reviews/${filed.body.id}`, undefined, { headers: acme.agent })).body.agent_name).toBe('refund-bot');

    const countOf = async (headers: Record<string, string>) => (await call(server.url, 'GET', '/reviews', undefined, { headers })).body.total;
    const before = [await countOf(acme.admin), await countOf(globex.admin)];
    expectProblem(await call(server.url, 'POST', '/reviews', { ...sampleReview, agent_id: registered.body.id }, { headers: globex.agent }), 404, /agent/);
    expectProblem(await call(server.url, 'POST', '/reviews', { ...sampleReview, agent_id: 999_999 }, { headers: acme.agent }), 404, /agent 999999/);
    // Refused, the review was not stored: not under another organization, not without its agent.
    expect([await countOf(acme.admin), await countOf(globex.admin)]).toEqual(before);
  });

  it("stamps a bound key's agent on every review it files, and refuses another", async () => {
    const agent = (await call(server.url, 'POST', '/agents', { name: 'deploy-bot' }, { headers: acme.admin })).body;
    const key = await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'deploy-bot key', scope: 'agent', agent_id: agent.id }, { headers: acme.admin });
    expect(key.status).toBe(201);
    expect(key.body.agent_id).toBe(agent.id);
    const filed = await call(server.url, 'POST', '/reviews', sampleReview, { headers: bearer(key.body.key) });
    expect(filed.body.agent_id).toBe(agent.id);
    expectProblem(await call(server.url, 'POST', '/reviews', { ...sampleReview, agent_id: agent.id + 1 }, { headers: bearer(key.body.key) }), 400, /belongs to agent/);

    expectProblem(await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'x', scope: 'admin', agent_id: agent.id }, { headers: acme.admin }), 400, /agent key/);
    const globexAgent = (await call(server.url, 'POST', '/agents', { name: 'theirs' }, { headers: globex.admin })).body;
    expectProblem(await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'x', scope: 'agent', agent_id: globexAgent.id }, { headers: acme.admin }), 404, /agent/);
  });
});

describe('revoking a key', () => {
  it('fails the key from the next request on; revoking it again changes nothing', async () => {
    const made = await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'short-lived', scope: 'agent' }, { headers: acme.admin });
    expect((await call(server.url, 'GET', '/reviews', undefined, { headers: bearer(made.body.key) })).status).toBe(200);
    expect((await call(server.url, 'DELETE', `/api-keys/${made.body.id}`, undefined, { headers: acme.admin })).status).toBe(204);
    expectProblem(await call(server.url, 'GET', '/reviews', undefined, { headers: bearer(made.body.key) }), 401);
    expect((await call(server.url, 'DELETE', `/api-keys/${made.body.id}`, undefined, { headers: acme.admin })).status).toBe(204);
    const listed = (await call(server.url, 'GET', `/organizations/${acme.id}/api-keys`, undefined, { headers: acme.admin })).body.api_keys;
    expect(listed.find((key: { id: number }) => key.id === made.body.id).revoked_at).not.toBeNull();
  });

  it.runIf(TEST_DATABASE_URL)('fails the key in another API process on the same database once that process hears of it', async () => {
    const other = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, database_url: server.config.database_url });
    try {
      const made = await call(server.url, 'POST', `/organizations/${acme.id}/api-keys`, { name: 'seen twice', scope: 'agent' }, { headers: acme.admin });
      expect((await call(other.url, 'GET', '/reviews', undefined, { headers: bearer(made.body.key) })).status).toBe(200);
      expect((await call(server.url, 'DELETE', `/api-keys/${made.body.id}`, undefined, { headers: acme.admin })).status).toBe(204);
      // The other process keeps the key it has read until the revocation's notification arrives.
      await expect.poll(async () => (await call(other.url, 'GET', '/reviews', undefined, { headers: bearer(made.body.key) })).status).toBe(401);
      expectProblem(await call(other.url, 'GET', '/reviews', undefined, { headers: bearer(made.body.key) }), 401);
    } finally {
      await other.dispose();
    }
  });
});

describe('the self-hosted edition', () => {
  it('serves no organization endpoints', async () => {
    const selfHosted = await startTestServer();
    try {
      expectProblem(await call(selfHosted.url, 'POST', '/organizations', { name: 'Acme' }), 404);
      expectProblem(await call(selfHosted.url, 'GET', '/organizations/1'), 404);
      expectProblem(await call(selfHosted.url, 'DELETE', '/api-keys/1'), 404);
    } finally {
      await selfHosted.dispose();
    }
  });
});
