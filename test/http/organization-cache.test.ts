import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../support/event-stream';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, type JsonResponse, startTestServer, type TestServer } from '../support/server';

/**
 * Each API process keeps an organization's compiled routing rules and workflows between
 * creates, and the keys it has read: a change to them, or to the people they name, governs the
 * next create — in the process that made it at once, in another once that process has heard of
 * it.
 */
const OPERATOR_KEY = 'operator-key-for-organization-cache-tests-0123';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Organization {
  id: number;
  admin: Record<string, string>;
  person(name: string): Promise<number>;
  file(url: string, taskType: string): Promise<any>;
}

/** A new organization on `url`'s server, with its admin key. */
async function organization(url: string): Promise<Organization> {
  const created = await call(url, 'POST', '/organizations', { name: `Org ${randomUUID().slice(0, 8)}` }, { headers: bearer(OPERATOR_KEY) });
  const admin = bearer(created.body.api_key.key);
  return {
    id: created.body.organization.id,
    admin,
    async person(name) {
      const invited = await call(url, 'POST', '/users', { email: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@acme.example`, name, role: 'reviewer' }, { headers: admin });
      expect(invited.status).toBe(201);
      return invited.body.id;
    },
    async file(at, taskType) {
      const review = await call(at, 'POST', '/reviews', { task_type: taskType, proposed_action: 'Refund order 1042 (EUR 250.00)' }, { headers: admin });
      expect(review.status).toBe(201);
      return review.body;
    },
  };
}

function created(response: JsonResponse): any {
  expect(response.status).toBe(201);
  return response.body;
}

describe('in one process', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  });
  afterAll(() => server?.dispose());

  it('routes a create by a rule created, changed or deleted just before', async () => {
    const org = await organization(server.url);
    const [sam, fay] = [await org.person('Sam'), await org.person('Fay')];
    const rule = created(await call(server.url, 'POST', '/routing-rules', { name: 'refunds', priority: 1, conditions: { task_type: 'refund' }, assign_to_user_id: sam }, { headers: org.admin }));
    expect((await org.file(server.url, 'refund')).routing_rule).toBe('refunds');

    await call(server.url, 'PATCH', `/routing-rules/${rule.id}`, { assign_to_user_id: fay }, { headers: org.admin });
    expect((await org.file(server.url, 'refund')).assigned_to).toMatch(/^fay-/);
    const first = created(await call(server.url, 'POST', '/routing-rules', { name: 'refunds first', priority: 10, conditions: { task_type: 'refund' }, assign_to_user_id: sam }, { headers: org.admin }));
    expect((await org.file(server.url, 'refund')).routing_rule).toBe('refunds first');
    await call(server.url, 'DELETE', `/routing-rules/${rule.id}`, undefined, { headers: org.admin });
    await call(server.url, 'PATCH', `/routing-rules/${first.id}`, { is_active: false }, { headers: org.admin });
    expect((await org.file(server.url, 'refund')).routing_rule).toBeNull();
  });

  it('governs a create by a workflow, people and a setting changed just before', async () => {
    const org = await organization(server.url);
    const [ana, ben, cy] = [await org.person('Ana'), await org.person('Ben'), await org.person('Cy')];
    const team = created(await call(server.url, 'POST', '/teams', { name: 'finance', member_ids: [ana, ben] }, { headers: org.admin }));
    expect((await org.file(server.url, 'payout')).workflow).toBeUndefined();
    const payouts = created(
      await call(server.url, 'POST', '/workflows', { name: 'payouts', conditions: { task_type: 'payout' }, stages: [{ name: 'finance', approvers: { team_id: team.id }, required_approvals: 1 }] }, { headers: org.admin }),
    );
    expect((await org.file(server.url, 'payout')).workflow).toMatchObject({ name: 'payouts', waiting_on: [ana, ben] });

    await call(server.url, 'DELETE', `/users/${ben}`, undefined, { headers: org.admin });
    expect((await org.file(server.url, 'payout')).workflow.waiting_on).toEqual([ana]);
    await call(server.url, 'PUT', `/teams/${team.id}/members/${cy}`, undefined, { headers: org.admin });
    expect((await org.file(server.url, 'payout')).workflow.waiting_on).toEqual([ana, cy]);
    await call(server.url, 'PATCH', `/workflows/${payouts.id}`, { is_active: false }, { headers: org.admin });
    expect((await org.file(server.url, 'payout')).workflow).toBeUndefined();
    await call(server.url, 'PATCH', `/organizations/${org.id}`, { settings: { require_two_approvals: true } }, { headers: org.admin });
    expect((await org.file(server.url, 'payout')).workflow).toMatchObject({ stages: [{ required_approvals: 2 }] });
  });
});

describe.runIf(TEST_DATABASE_URL)('across API processes on one PostgreSQL database', () => {
  let servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.reverse()) await server.dispose();
    servers = [];
  });

  async function twoProcesses(): Promise<[TestServer, TestServer]> {
    const first = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    servers.push(first);
    servers.push(await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, database_url: first.config.database_url }));
    return [first, servers[1]];
  }

  /**
   * Returns once `reader` has heard of everything `writer` committed so far: a review filed
   * through the writer now shows on the reader's stream, and the relay publishes in commit order.
   */
  async function heardOf(writer: TestServer, reader: TestServer, org: Organization): Promise<void> {
    const stream = await subscribe(reader.url, { headers: org.admin });
    const marker = await org.file(writer.url, 'marker');
    await expect.poll(() => stream.events.some((event) => event.event === 'review.created' && event.data.id === marker.id)).toBe(true);
    stream.close();
  }

  /** Two processes, and an organization whose refunds a rule sends to Sam: a create through the second has compiled it there. */
  async function refundsToSam() {
    const [changer, creator] = await twoProcesses();
    const org = await organization(changer.url);
    const [sam, fay] = [await org.person('Sam'), await org.person('Fay')];
    const rule = created(await call(changer.url, 'POST', '/routing-rules', { name: 'refunds', priority: 1, conditions: { task_type: 'refund' }, assign_to_user_id: sam }, { headers: org.admin }));
    await heardOf(changer, creator, org);
    expect((await org.file(creator.url, 'refund')).assigned_to).toMatch(/^sam-/);
    return { changer, creator, org, sam, fay, rule };
  }

  /** Ends both processes' connections that listen for notifications, as a network fault would; returns once both listen again. */
  async function cutNotifications(sql: Sequelize): Promise<void> {
    // A relay's connection runs nothing but LISTEN and UNLISTEN: its last statement is one of them.
    const listening = 'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ~ \'^(UN)?LISTEN \'';
    const lost = (await sql.query<{ pid: number }>(listening, { type: QueryTypes.SELECT })).map((row) => row.pid);
    expect(lost).toHaveLength(2);
    await sql.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN (:lost)', { replacements: { lost } });
    await expect
      .poll(async () => (await sql.query<{ pid: number }>(listening, { type: QueryTypes.SELECT })).filter((row) => !lost.includes(row.pid)).length, { timeout: 15_000 })
      .toBe(2);
  }

  it('routes and governs the next create in one process by a rule and a workflow changed in the other, once it has heard of them', async () => {
    const { changer, creator, org, sam, fay, rule } = await refundsToSam();
    expect((await org.file(creator.url, 'refund')).workflow).toBeUndefined();

    await call(changer.url, 'PATCH', `/routing-rules/${rule.id}`, { assign_to_user_id: fay }, { headers: org.admin });
    created(await call(changer.url, 'POST', '/workflows', { name: 'refunds', conditions: { task_type: 'refund' }, stages: [{ name: 'one', approvers: { user_ids: [sam] }, required_approvals: 1 }] }, { headers: org.admin }));
    await heardOf(changer, creator, org);
    const after = await org.file(creator.url, 'refund');
    expect(after.assigned_to).toMatch(/^fay-/);
    expect(after.workflow).toMatchObject({ name: 'refunds', waiting_on: [sam] });
  });

  it('keeps no organization\'s rules from before a lost connection to the notifications', async () => {
    const { changer, creator, org, fay, rule } = await refundsToSam();

    // A change whose announcement never reaches the creator, as while its connection was down.
    const sql = changer.test.sequelize;
    await sql.query('UPDATE routing_rules SET assign_to_user_id = $fay WHERE id = $id', { bind: { fay, id: rule.id } });
    expect((await org.file(creator.url, 'refund')).assigned_to).toMatch(/^sam-/);
    await cutNotifications(sql);

    expect((await org.file(creator.url, 'refund')).assigned_to).toMatch(/^fay-/);
  });

  it('keeps no key from before a lost connection to the notifications', async () => {
    const [reader, writer] = await twoProcesses();
    const org = await organization(writer.url);
    const made = created(await call(writer.url, 'POST', `/organizations/${org.id}/api-keys`, { name: 'kept', scope: 'agent' }, { headers: org.admin }));
    const listReviews = async () => (await call(reader.url, 'GET', '/reviews', undefined, { headers: bearer(made.key) })).status;
    expect(await listReviews()).toBe(200);

    // A revocation whose announcement never reaches the reader, as while its connection was down:
    // the reader still takes the key it has read.
    const sql = writer.test.sequelize;
    await sql.query('UPDATE api_keys SET revoked_at = $now WHERE id = $id', { bind: { now: Date.now(), id: made.id } });
    expect(await listReviews()).toBe(200);
    await cutNotifications(sql);

    expect(await listReviews()).toBe(401);
  });
});
