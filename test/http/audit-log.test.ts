import path from 'node:path';
import pg from 'pg';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/connection';
import { AuditStore } from '../../server/db/audit-store';
import { migrate } from '../../server/db/migrate';
import * as auditLinkedAfterCommit from '../../server/db/migrations/0029-audit-linked-after-commit';
import { AuditService, entryHash, GENESIS_HASH, hashedText } from '../../server/domain/organizations/audit';
import { createTestDatabase, TEST_DATABASE_URL } from '../support/postgres';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';

const OPERATOR_KEY = 'operator-key-for-audit-tests-0123456789ab';
const bearer = (key: string): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${key}` } });

let server: TestServer;
let organizationId: number;
let admin: string;
let agentKey: { id: number; key: string };
let otherAdmin: string;

interface Entry {
  id: number;
  sequence: number;
  hash: string;
  action: string;
  actor: { type: string; id: string | null; label: string | null };
  target_type: string;
  target_id: number | null;
  data: Record<string, unknown>;
}

async function entries(query = '', key = admin): Promise<Entry[]> {
  const page = await call(server.url, 'GET', `/audit-logs${query}`, undefined, bearer(key));
  expect(page.status).toBe(200);
  return page.body.entries;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  const created = await call(server.url, 'POST', '/organizations', { name: 'Acme' }, bearer(OPERATOR_KEY));
  organizationId = created.body.organization.id;
  admin = created.body.api_key.key;
  const madeKey = await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: 'agent', scope: 'agent' }, bearer(admin));
  agentKey = { id: madeKey.body.id, key: madeKey.body.key };
  otherAdmin = (await call(server.url, 'POST', '/organizations', { name: 'Globex' }, bearer(OPERATOR_KEY))).body.api_key.key;

  const review = (await call(server.url, 'POST', '/reviews', sampleReview, bearer(agentKey.key))).body;
  const reviewer = (await call(server.url, 'POST', '/users', { email: 'dana@acme.example', name: 'Dana', role: 'reviewer' }, bearer(admin))).body;
  await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'reject', notes: 'No proof of loss.', reviewer_id: reviewer.id }, bearer(admin));
  await call(server.url, 'POST', `/reviews/${review.id}/feedback`, { rating: 5 }, bearer(agentKey.key));
  await call(server.url, 'POST', '/agents', { name: 'refund-bot' }, bearer(admin));
  await call(server.url, 'PATCH', `/organizations/${organizationId}`, { name: 'Acme Corp' }, bearer(admin));
});
afterAll(() => server?.dispose());

describe('the audit log', () => {
  it('records every change and administrative action, newest first, with who did it', async () => {
    const log = await entries();
    expect(log.map((entry) => entry.action)).toEqual([
      'organization.updated',
      'agent.created',
      'feedback.created',
      'review.decided',
      'user.created',
      'review.created',
      'api_key.created',
      'api_key.created',
      'organization.created',
    ]);
    const byAction = (action: string): Entry => log.find((entry) => entry.action === action) as Entry;
    expect(byAction('organization.created').actor).toEqual({ type: 'operator', id: 'operator', label: 'operator' });
    expect(byAction('review.created').actor).toEqual({ type: 'api_key', id: `key:${agentKey.id}`, label: 'agent' });
    expect(byAction('review.decided')).toMatchObject({ target_type: 'review', data: { decision_type: 'reject', reviewer_name: 'Dana' } });
    expect(byAction('review.decided').actor.type).toBe('api_key');
    expect(byAction('organization.updated').data).toEqual({ changed: ['name'] });
  });

  it('filters, and pages with a cursor through every entry once', async () => {
    expect((await entries('?action=api_key.created')).map((entry) => entry.target_id).sort()).toEqual([1, agentKey.id].sort());
    expect((await entries('?actor_type=operator')).map((entry) => entry.action)).toEqual(['api_key.created', 'organization.created']);
    expect(await entries(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);

    const seen: number[] = [];
    let cursor: number | null = null;
    do {
      const page: { status: number; body: { entries: Entry[]; next_cursor: number | null } } = await call(
        server.url,
        'GET',
        `/audit-logs?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
        undefined,
        bearer(admin),
      );
      seen.push(...page.body.entries.map((entry) => entry.id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual((await entries()).map((entry) => entry.id));
  });

  it("shows an organization only its own entries", async () => {
    const theirs = await entries('', otherAdmin);
    expect(theirs.map((entry) => entry.action)).toEqual(['api_key.created', 'organization.created']);
  });

  it('names each change’s own actor when changes by different keys are written at once', async () => {
    const second = await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: 'second admin', scope: 'admin' }, bearer(admin));
    const keys = [
      { key: admin, actor: 'key:1' },
      { key: second.body.key as string, actor: `key:${second.body.id}` },
    ];
    const names = Array.from({ length: 12 }, (_, index) => ({ name: `concurrent-${index}`, ...keys[index % 2] }));
    await Promise.all(names.map(({ name, key }) => call(server.url, 'POST', '/agents', { name }, bearer(key))));
    const created = await entries('?action=agent.created&limit=100');
    for (const { name, actor } of names) {
      const agent = (await call(server.url, 'GET', '/agents', undefined, bearer(admin))).body.agents.find((a: { name: string }) => a.name === name);
      expect(created.find((entry) => entry.target_id === agent.id)?.actor.id, name).toBe(actor);
    }
  });

  it('verifies its hash chain up to its head, the newest entry', async () => {
    const log = await entries();
    expect(log.map((entry) => entry.sequence)).toEqual(log.map((_, index) => log.length - index));
    const verified = await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(admin));
    expect(verified.body).toEqual({ valid: true, entries: log.length, first_invalid_id: null, head: { sequence: log.length, hash: log[0].hash } });
  });

  it('numbers the entries of concurrent changes without gaps, and its head follows the newest', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Concurrent' }, bearer(OPERATOR_KEY));
    const key = created.body.api_key.key as string;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call(server.url, 'POST', '/agents', { name: `agent-${i}` }, bearer(key))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(201));
    const log = await entries('?limit=500', key);
    expect(log.map((entry) => entry.sequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    const verified = await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(key));
    expect(verified.body).toEqual({ valid: true, entries: 32, first_invalid_id: null, head: { sequence: 32, hash: log[0].hash } });
  });

  it('refuses to change or delete an entry, even to SQL sent straight to the database', async () => {
    const { sequelize } = server.test;
    // The database's own refusal, under whatever name Sequelize gives the error.
    const refusal = { parent: { message: expect.stringMatching(/cannot be changed or deleted/) } };
    await expect(sequelize.query("UPDATE audit_log SET action = 'nothing.happened'")).rejects.toMatchObject(refusal);
    await expect(sequelize.query('DELETE FROM audit_log')).rejects.toMatchObject(refusal);
    expect((await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(admin))).body.valid).toBe(true);
  });

  it('finds where an entry was changed around the guard', async () => {
    const { sequelize, dialect } = server.test;
    const target = (await entries('?action=review.decided'))[0];
    const guards = dialect === 'postgres' ? ['DROP TRIGGER audit_log_append_only ON audit_log'] : ['DROP TRIGGER audit_log_no_update'];
    for (const guard of guards) await sequelize.query(guard);
    await sequelize.query(`UPDATE audit_log SET data = '{"decision_type":"approve"}' WHERE id = ${target.id}`);
    const verified = await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(admin));
    expect(verified.body).toMatchObject({ valid: false, first_invalid_id: target.id });
  });
});

describe('the audit log, tampered with in the database', () => {
  it('notices its newest entries deleted: the log ends before its head, which cannot be moved back', async () => {
    const tampered = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    try {
      const key = (await call(tampered.url, 'POST', '/organizations', { name: 'Tampered' }, bearer(OPERATOR_KEY))).body.api_key.key as string;
      const untouched = (await call(tampered.url, 'POST', '/organizations', { name: 'Untouched' }, bearer(OPERATOR_KEY))).body.api_key.key as string;
      for (const name of ['first', 'second', 'to be hidden']) await call(tampered.url, 'POST', '/agents', { name }, bearer(key));
      const [newest, kept] = (await call(tampered.url, 'GET', '/audit-logs', undefined, bearer(key))).body.entries as Entry[];
      const { sequelize, dialect } = tampered.test;
      await sequelize.query(dialect === 'postgres' ? 'DROP TRIGGER audit_log_append_only ON audit_log' : 'DROP TRIGGER audit_log_no_delete');
      await sequelize.query(`DELETE FROM audit_log WHERE id = ${newest.id}`);

      const verified = await call(tampered.url, 'GET', '/audit-logs/verify', undefined, bearer(key));
      expect(verified.body).toEqual({ valid: false, entries: kept.sequence, first_invalid_id: null, head: { sequence: newest.sequence, hash: newest.hash } });
      const refusal = { parent: { message: expect.stringMatching(/only moves forward/) } };
      await expect(sequelize.query(`UPDATE audit_heads SET sequence = ${kept.sequence}, hash = '${kept.hash}'`)).rejects.toMatchObject(refusal);
      await expect(sequelize.query('DELETE FROM audit_heads')).rejects.toMatchObject(refusal);
      expect((await call(tampered.url, 'GET', '/audit-logs/verify', undefined, bearer(untouched))).body.valid).toBe(true);
    } finally {
      await tampered.dispose();
    }
  });

  it('finds an entry forked off the chain, its hash right and the head moved to it', async () => {
    const forked = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    try {
      const created = (await call(forked.url, 'POST', '/organizations', { name: 'Forked' }, bearer(OPERATOR_KEY))).body;
      const key = created.api_key.key as string;
      for (const name of ['first', 'second']) await call(forked.url, 'POST', '/agents', { name }, bearer(key));
      const [newest, before] = (await call(forked.url, 'GET', '/audit-logs', undefined, bearer(key))).body.entries as Entry[];
      // A second successor of `before`, at the next place, hashed as the application would.
      const fields = { organization_id: created.organization.id, action: 'agent.created', target_type: 'agent', target_id: 999, data: {}, actor: { type: 'operator' as const, id: 'operator', label: 'operator' }, created_at: new Date(5000).toISOString() };
      const hash = entryHash(before.hash, fields);
      const { sequelize } = forked.test;
      await sequelize.query(
        `INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, sequence, prev_hash, hash)
         VALUES (${created.organization.id}, 'operator', 'operator', 'operator', 'agent.created', 'agent', 999, '{}', 5000, ${newest.sequence + 1}, '${before.hash}', '${hash}')`,
      );
      await sequelize.query(`UPDATE audit_heads SET sequence = ${newest.sequence + 1}, hash = '${hash}' WHERE organization_id = ${created.organization.id}`);
      const fork = (await call(forked.url, 'GET', '/audit-logs', undefined, bearer(key))).body.entries[0] as Entry;
      expect(fork).toMatchObject({ sequence: newest.sequence + 1, target_id: 999 });

      const verified = await call(forked.url, 'GET', '/audit-logs/verify', undefined, bearer(key));
      expect(verified.body).toMatchObject({ valid: false, first_invalid_id: fork.id });
    } finally {
      await forked.dispose();
    }
  });
});

describe.runIf(TEST_DATABASE_URL)('the audit log under two API processes', () => {
  it('stays one chain when both append to it at once', async () => {
    const hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    const other = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, database_url: hosted.config.database_url });
    try {
      const key = (await call(hosted.url, 'POST', '/organizations', { name: 'Busy' }, bearer(OPERATOR_KEY))).body.api_key.key;
      // Task types of their own: reviews alike would queue on their shared statistics tally row anyway.
      const creates = Array.from({ length: 40 }, (_, i) => call(i % 2 ? other.url : hosted.url, 'POST', '/reviews', { ...sampleReview, task_type: `task-${i}` }, bearer(key)));
      expect((await Promise.all(creates)).map((answer) => answer.status)).toEqual(Array(40).fill(201));
      const verified = await call(other.url, 'GET', '/audit-logs/verify', undefined, bearer(key));
      expect(verified.body).toMatchObject({ valid: true, entries: 42, first_invalid_id: null, head: { sequence: 42 } });
      const log = (await call(hosted.url, 'GET', '/audit-logs?limit=500', undefined, bearer(key))).body.entries as Entry[];
      expect(log.map((entry) => entry.sequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 42 }, (_, i) => i + 1));
    } finally {
      await other.dispose();
      await hosted.dispose();
    }
  });
});

describe.runIf(TEST_DATABASE_URL)('the audit log on PostgreSQL', () => {
  const appendPending = (client: pg.Client, organization_id: number, target_id: number) => {
    const fields = { organization_id, action: 'agent.created', target_type: 'agent', target_id, data: { n: target_id }, actor: { type: 'operator' as const, id: 'operator', label: 'operator' }, created_at: new Date(target_id * 1000).toISOString() };
    return client.query(
      `INSERT INTO audit_pending (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, hashed)
       VALUES ($1, 'operator', 'operator', 'operator', 'agent.created', 'agent', $2, $3, $4, $5)`,
      [organization_id, target_id, JSON.stringify(fields.data), target_id * 1000, hashedText(fields)],
    );
  };

  async function withClients(count: number, work: (clients: pg.Client[]) => Promise<void>, url = server.config.database_url): Promise<void> {
    const clients: pg.Client[] = [];
    try {
      for (let i = 0; i < count; i += 1) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        clients.push(client);
      }
      await work(clients);
    } finally {
      for (const client of clients) await client.end();
    }
  }

  /**
   * Two transactions each append an entry to one organization's log; the second commits while the
   * first is still open. Had the second to wait for the first's head, it would fail (lock_timeout),
   * not hang: the first does not commit until the second is through. Both are in the chain when
   * the log is read, with the hash the application computes, and nothing is left waiting.
   */
  it('chains committed entries after the commit, so appenders to one log do not wait for each other', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'After commit' }, bearer(OPERATOR_KEY));
    const key = created.body.api_key.key as string;
    const organization_id = created.body.organization.id as number;
    const made = (await entries('', key)).length;
    await withClients(2, async ([first, second]) => {
      await first.query('BEGIN');
      await appendPending(first, organization_id, 1);
      await second.query('BEGIN');
      await second.query("SET LOCAL lock_timeout = '10s'");
      await appendPending(second, organization_id, 2);
      await second.query('COMMIT');
      await first.query('COMMIT');
    });
    const log = await entries('', key);
    expect(log.slice(0, 2).map((entry) => entry.sequence)).toEqual([made + 2, made + 1]);
    expect(log.slice(0, 2).map((entry) => entry.target_id).sort()).toEqual([1, 2]);
    const verified = await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(key));
    expect(verified.body).toEqual({ valid: true, entries: made + 2, first_invalid_id: null, head: { sequence: made + 2, hash: log[0].hash } });
    // This organization's: another's change may be waiting its 0.1 s to be chained.
    expect(await server.test.sequelize.query(`SELECT id FROM audit_pending WHERE organization_id = ${organization_id}`, { type: QueryTypes.SELECT })).toEqual([]);
  });

  it('chains a change\'s entries soon after it commits, with nobody reading the log', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Unread' }, bearer(OPERATOR_KEY));
    const organization_id = created.body.organization.id as number;
    const agent = await call(server.url, 'POST', '/agents', { name: 'unread-bot' }, bearer(created.body.api_key.key));
    expect(agent.status).toBe(201);
    const chained = async () => (await server.test.sequelize.query<{ action: string }>(`SELECT action FROM audit_log WHERE organization_id = ${organization_id} ORDER BY sequence`, { type: QueryTypes.SELECT })).map((row) => row.action);
    await expect.poll(chained, { timeout: 10_000 }).toContain('agent.created');
    expect(await server.test.sequelize.query(`SELECT id FROM audit_pending WHERE organization_id = ${organization_id}`, { type: QueryTypes.SELECT })).toEqual([]);
  });

  it('chains an entry that commits while a batch is being chained in the next batch, never dropping it', async () => {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Mid batch' }, bearer(OPERATOR_KEY));
    const key = created.body.api_key.key as string;
    const organization_id = created.body.organization.id as number;
    const made = (await entries('', key)).length;
    await withClients(2, async ([linker, late]) => {
      // The batch holds the head from the start: the server's own sweep, which may run at any
      // moment, waits for it rather than chaining the first entry before the batch can.
      await linker.query('BEGIN');
      await linker.query('SELECT 1 FROM audit_heads WHERE organization_id = $1 FOR UPDATE', [organization_id]);
      await appendPending(late, organization_id, 1);
      // The late entry is written before the batch chains anything, and commits while it holds the head.
      await late.query('BEGIN');
      await appendPending(late, organization_id, 2);
      expect((await linker.query('SELECT audit_link($1) AS linked', [organization_id])).rows).toEqual([{ linked: 1 }]);
      await late.query('COMMIT');
      await linker.query('COMMIT');
    });
    const log = await entries('', key);
    expect(log.slice(0, 2).map((entry) => [entry.target_id, entry.sequence])).toEqual([[2, made + 2], [1, made + 1]]);
    expect((await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(key))).body).toMatchObject({ valid: true, entries: made + 2 });
  });

  it('chains what a stopped process left waiting once a process starts, and what it is owed soon, with nobody reading the log; migrating down chains it too', async () => {
    const database = await createTestDatabase();
    const db = await openDatabase(database.url);
    try {
      await migrate(db.sequelize);
      const organization_id = 7;
      await withClients(1, async ([client]) => {
        await appendPending(client, organization_id, 1);
        await appendPending(client, organization_id, 2);
      }, database.url);
      const store = new AuditStore(db);
      expect(await store.chain(organization_id, 0, 10)).toEqual([]);
      await store.linker?.start();
      await store.linker?.stop();
      expect((await store.chain(organization_id, 0, 10)).map((entry) => [entry.target_id, entry.sequence])).toEqual([[1, 1], [2, 2]]);
      expect(await new AuditService(store).verify(organization_id)).toMatchObject({ valid: true, entries: 2, head: { sequence: 2 } });

      // Undone, the migration chains what waits before linking goes back to COMMIT; redone, it chains after the commit again.
      const context = db.sequelize.getQueryInterface();
      await withClients(1, (clients) => appendPending(clients[0], organization_id, 3).then(() => undefined), database.url);
      await auditLinkedAfterCommit.down({ context });
      expect((await store.chain(organization_id, 2, 10)).map((entry) => [entry.target_id, entry.sequence])).toEqual([[3, 3]]);
      await withClients(1, (clients) => appendPending(clients[0], organization_id, 4).then(() => undefined), database.url);
      expect((await store.chain(organization_id, 3, 10)).map((entry) => [entry.target_id, entry.sequence])).toEqual([[4, 4]]);
      await auditLinkedAfterCommit.up({ context });
      await withClients(1, (clients) => appendPending(clients[0], organization_id, 5).then(() => undefined), database.url);
      expect(await store.chain(organization_id, 4, 10)).toEqual([]);
      // Owed a link (as a change's commit owes one), a process chains it soon, with no sweep and no reader.
      const owing = new AuditStore(db);
      owing.linkLater([organization_id]);
      await expect.poll(async () => (await store.chain(organization_id, 4, 10)).map((entry) => entry.target_id), { timeout: 10_000 }).toEqual([5]);
      await owing.linker?.stop();
      expect(await new AuditService(store).verify(organization_id)).toMatchObject({ valid: true, entries: 5, head: { sequence: 5 } });
    } finally {
      await db.close();
      await database.drop();
    }
  });
});

describe('migration 0017', () => {
  it('numbers the entries written before it and sets each organization\'s head to its newest, keeping the guard', async () => {
    const temp = makeTempDir();
    const database = TEST_DATABASE_URL ? await createTestDatabase({ empty: true }) : null;
    const db = await openDatabase(database?.url ?? `sqlite:${path.join(temp.dir, 'greenlight.db')}`);
    try {
      await migrate(db.sequelize, { to: '0016-webhooks' });
      const last = new Map<number, string>();
      // Two organizations' entries, interleaved, as they were written before entries had a place.
      for (const [index, organizationId] of [1, 2, 1, 1, 2].entries()) {
        const fields = { organization_id: organizationId, action: 'agent.created', target_type: 'agent', target_id: index, data: {}, actor: { type: 'operator' as const, id: 'operator', label: 'operator' }, created_at: new Date(index * 1000).toISOString() };
        const prev = last.get(organizationId) ?? GENESIS_HASH;
        const hash = entryHash(prev, fields);
        await db.sequelize.query(
          `INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, prev_hash, hash)
           VALUES (${organizationId}, 'operator', 'operator', 'operator', 'agent.created', 'agent', ${index}, '{}', ${index * 1000}, '${prev}', '${hash}')`,
        );
        last.set(organizationId, hash);
      }
      expect(await migrate(db.sequelize, { to: '0017-audit-head' })).toEqual(['0017-audit-head']);

      const store = new AuditStore(db);
      const audit = new AuditService(store);
      expect((await store.chain(1, 0, 10)).map((entry) => [entry.target_id, entry.sequence])).toEqual([[0, 1], [2, 2], [3, 3]]);
      // Verified as the current code verifies, after the migrations since, which keep the chains as they are.
      await migrate(db.sequelize);
      expect(await audit.verify(1)).toEqual({ valid: true, entries: 3, first_invalid_id: null, head: { sequence: 3, hash: last.get(1) } });
      expect(await audit.verify(2)).toEqual({ valid: true, entries: 2, first_invalid_id: null, head: { sequence: 2, hash: last.get(2) } });
      const refusal = { parent: { message: expect.stringMatching(/cannot be changed or deleted/) } };
      await expect(db.sequelize.query('UPDATE audit_log SET sequence = 7')).rejects.toMatchObject(refusal);
      await expect(db.sequelize.query('DELETE FROM audit_log')).rejects.toMatchObject(refusal);
    } finally {
      await db.close();
      await database?.drop();
      temp.remove();
    }
  });
});
