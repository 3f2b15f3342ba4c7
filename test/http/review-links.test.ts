import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connection';
import { migrate } from '../../server/db/migrate';
import { createTestDatabase, TEST_DATABASE_URL } from '../support/postgres';
import { call, eventually, expectProblem, startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';

const OPERATOR_KEY = 'operator-key-for-review-link-tests-0123456789';
const bearer = (key: string): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${key}` } });

let receiver: http.Server;
let receiverUrl: string;
const received: string[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => receiver?.close(resolve)));

async function withServer(overrides: Parameters<typeof startTestServer>[0], use: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer(overrides);
  try {
    await use(server);
  } finally {
    await server.dispose();
  }
}

describe('links.dashboard', () => {
  it('points into public_url on every answer that carries the review, and in its webhook payloads', async () => {
    await withServer(
      {
        public_url: 'https://review.example.com/',
        webhooks: [{ url: `${receiverUrl}/links`, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=', events: ['review.created', 'review.decided'] }],
        webhook_allow_private_targets: true,
        webhook_allow_http: true,
      },
      async (server) => {
        const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10' });
        expect(created.status).toBe(201);
        const link = `https://review.example.com/#/reviews/${created.body.id}`;
        expect(created.body.links).toEqual({ dashboard: link });
        expect((await call(server.url, 'GET', `/reviews/${created.body.id}`)).body.links).toEqual({ dashboard: link });
        expect((await call(server.url, 'GET', '/reviews')).body.reviews[0].links).toEqual({ dashboard: link });
        expect((await call(server.url, 'POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve' })).status).toBe(200);
        expect((await call(server.url, 'GET', `/reviews/${created.body.id}`)).body).toMatchObject({ status: 'approved', links: { dashboard: link } });

        await eventually(() => received.length >= 2, 10_000, 'both deliveries');
        const payloads = received.map((body) => JSON.parse(body));
        expect(payloads.map((payload) => payload.type)).toEqual(['review.created', 'review.decided']);
        for (const payload of payloads) expect(payload.data.links).toEqual({ dashboard: link });
      },
    );
  });

  it("is this machine's dashboard in the self-hosted edition without public_url", async () => {
    await withServer({ dashboard_host: '0.0.0.0', dashboard_port: 8642, allow_unauthenticated_network: true }, async (server) => {
      const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10', blocking: true }, { headers: { prefer: 'wait=1' } });
      expect(created.status).toBe(408);
      const review = await call(server.url, 'GET', `/reviews/${created.body.review_id}`);
      expect(review.body.links).toEqual({ dashboard: `http://127.0.0.1:8642/#/reviews/${created.body.review_id}` });
    });
  });

  it('is absent in the hosted edition without public_url, and present with it', async () => {
    for (const public_url of ['', 'https://greenlight.example.org']) {
      await withServer({ edition: 'hosted', operator_key: OPERATOR_KEY, public_url }, async (server) => {
        const organization = await call(server.url, 'POST', '/organizations', { name: 'Linked' }, bearer(OPERATOR_KEY));
        const created = await call(server.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy 1.2.3' }, bearer(organization.body.api_key.key));
        expect(created.status).toBe(201);
        if (public_url) expect(created.body.links).toEqual({ dashboard: `${public_url}/#/reviews/${created.body.id}` });
        else expect(created.body).not.toHaveProperty('links');
      });
    }
  });
});

describe('agent_name', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.dispose());

  it('is stored as given and shown on the review', async () => {
    const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10', agent_name: '  refund-bot ' });
    expect(created.body.agent_name).toBe('refund-bot');
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}`)).body.agent_name).toBe('refund-bot');
    const anonymous = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 11' });
    expect(anonymous.body.agent_name).toBeNull();
  });

  it('refuses hidden characters even where refuse_hidden_characters is off, a blank name and a long one', async () => {
    expect(server.config.refuse_hidden_characters).toBe(false);
    expectProblem(await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'x', agent_name: 'refund\u202Ebot' }), 400, /agent_name contains U\+202E, a bidirectional control/);
    expectProblem(await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'x', agent_name: 'bot\u001b[31m' }), 400, /agent_name contains U\+001B, a control character/);
    expectProblem(await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'x', agent_name: '   ' }), 400, /agent_name must not be blank/);
    expectProblem(await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'x', agent_name: 'a'.repeat(101) }), 400, /agent_name/);
    expect((await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'x', agent_name: 'a'.repeat(100) })).status).toBe(201);
  });

  it("gives way to a registered agent's name in the hosted edition", async () => {
    await withServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, async (hosted) => {
      const organization = await call(hosted.url, 'POST', '/organizations', { name: 'Agents' }, bearer(OPERATOR_KEY));
      const admin = bearer(organization.body.api_key.key);
      const agent = await call(hosted.url, 'POST', '/agents', { name: 'refund-bot' }, admin);
      const key = await call(hosted.url, 'POST', `/organizations/${organization.body.organization.id}/api-keys`, { name: 'refund-bot key', scope: 'agent', agent_id: agent.body.id }, admin);
      const filed = await call(hosted.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10', agent_name: 'deploy-bot' }, bearer(key.body.key));
      expect(filed.body).toMatchObject({ agent_id: agent.body.id, agent_name: 'refund-bot' });
      const unregistered = await call(hosted.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 12', agent_name: 'script' }, admin);
      expect(unregistered.body).toMatchObject({ agent_id: null, agent_name: 'script' });
    });
  });
});

describe('migration 0020', () => {
  it("names the reviews filed before it by registered agents after their agent, within the review's organization", async () => {
    const temp = makeTempDir();
    const database = TEST_DATABASE_URL ? await createTestDatabase({ empty: true }) : null;
    const db = await openDatabase(database?.url ?? `sqlite:${path.join(temp.dir, 'greenlight.db')}`);
    try {
      await migrate(db.sequelize, { to: '0018-webhook-delivery-queue' });
      await db.sequelize.query("INSERT INTO organizations (id, name, settings, created_at, updated_at) VALUES (1, 'Ours', '{}', 0, 0), (2, 'Theirs', '{}', 0, 0)");
      await db.sequelize.query("INSERT INTO agents (id, organization_id, name, metadata, created_at) VALUES (1, 1, 'refund-bot', '{}', 0)");
      const review = (id: number, organizationId: number | null, agentId: number | null): string =>
        `(${id}, ${organizationId ?? 'NULL'}, ${agentId ?? 'NULL'}, 'refund', 'Refund', 'medium', '{}', 'pending', 0, 0)`;
      await db.sequelize.query(
        `INSERT INTO reviews (id, organization_id, agent_id, task_type, proposed_action, urgency, metadata, status, created_at, updated_at) VALUES ${[
          review(1, 1, 1),
          review(2, 2, 1),
          review(3, null, 1),
          review(4, 1, null),
        ].join(', ')}`,
      );
      expect(await migrate(db.sequelize)).toContain('0020-agent-names');
      const rows = await db.sequelize.query<{ id: number; agent_name: string | null }>('SELECT id, agent_name FROM reviews ORDER BY id', { type: QueryTypes.SELECT });
      expect(rows.map((row) => [Number(row.id), row.agent_name])).toEqual([[1, 'refund-bot'], [2, null], [3, null], [4, null]]);
    } finally {
      await db.close();
      await database?.drop();
      temp.remove();
    }
  });
});

describe("the audit log's targets", () => {
  it('are named, a review linked to the dashboard, within the organization, and a removed one left out', async () => {
    await withServer({ edition: 'hosted', operator_key: OPERATOR_KEY, public_url: 'https://greenlight.example.org' }, async (server) => {
      const ours = await call(server.url, 'POST', '/organizations', { name: 'Ours' }, bearer(OPERATOR_KEY));
      const theirs = await call(server.url, 'POST', '/organizations', { name: 'Theirs' }, bearer(OPERATOR_KEY));
      const admin = bearer(ours.body.api_key.key);
      const review = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10' }, admin);
      const person = await call(server.url, 'POST', '/users', { email: 'dana@ours.example', name: 'Dana Ours', role: 'reviewer' }, admin);
      const team = await call(server.url, 'POST', '/teams', { name: 'Finance' }, admin);
      const rule = await call(server.url, 'POST', '/routing-rules', { name: 'big refunds', priority: 1, assign_to_team_id: team.body.id }, admin);
      expect(rule.status).toBe(201);
      expect((await call(server.url, 'DELETE', `/routing-rules/${rule.body.id}`, undefined, admin)).status).toBe(204);
      // Another organization's review of the same kind: its log is its own.
      await call(server.url, 'POST', '/reviews', { task_type: 'secret-task', proposed_action: 'Theirs' }, bearer(theirs.body.api_key.key));

      const page = (await call(server.url, 'GET', '/audit-logs', undefined, admin)).body;
      const named = Object.fromEntries(page.targets.map((target: { type: string; id: number; name: string }) => [`${target.type}:${target.id}`, target]));
      expect(named[`review:${review.body.id}`]).toEqual({ type: 'review', id: review.body.id, name: 'refund', links: { dashboard: `https://greenlight.example.org/#/reviews/${review.body.id}` } });
      expect(named[`user:${person.body.id}`]).toMatchObject({ name: 'Dana Ours' });
      expect(named[`team:${team.body.id}`]).toMatchObject({ name: 'Finance' });
      expect(named[`organization:${ours.body.organization.id}`]).toMatchObject({ name: 'Ours' });
      expect(page.entries.some((entry: { target_type: string; target_id: number }) => entry.target_type === 'routing_rule' && entry.target_id === rule.body.id)).toBe(true);
      expect(named[`routing_rule:${rule.body.id}`]).toBeUndefined();
      expect(JSON.stringify(page.targets)).not.toMatch(/secret-task|Theirs/);
      // Every entry's hash still covers exactly what it was written with.
      expect((await call(server.url, 'GET', '/audit-logs/verify', undefined, admin)).body.valid).toBe(true);
    });
  });
});
