import pg from 'pg';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tallySlots from '../../server/db/migrations/0024-tally-slots';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, startTestServer, type TestServer } from '../support/server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.dispose());

const TASK_TYPES = ['refund', 'deploy', 'email'];
const URGENCIES = ['low', 'medium', 'high', 'critical'];

async function rows<T extends object>(sql: string): Promise<T[]> {
  return server.test.sequelize.query<T>(sql, { type: QueryTypes.SELECT });
}

/** GET /stats as a count over the rows would answer it. */
async function statisticsOfTheRows() {
  const counts = async (column: string, where = '1 = 1') =>
    Object.fromEntries(
      (await rows<{ key: string; count: string }>(`SELECT ${column} AS key, COUNT(*) AS count FROM reviews WHERE ${where} GROUP BY ${column}`)).map(
        ({ key, count }) => [key, Number(count)],
      ),
    );
  const statuses = await counts('status');
  const [{ total }] = await rows<{ total: string }>('SELECT COUNT(*) AS total FROM reviews');
  return {
    total_reviews: Number(total),
    pending_reviews: statuses.pending ?? 0,
    approved_reviews: statuses.approved ?? 0,
    rejected_reviews: statuses.rejected ?? 0,
    modified_reviews: statuses.modified ?? 0,
    task_type_breakdown: await counts('task_type'),
    urgency_breakdown: { low: 0, medium: 0, high: 0, critical: 0, ...(await counts('urgency')) },
  };
}

async function expectStatisticsOfTheRows(): Promise<void> {
  const { body } = await call(server.url, 'GET', '/stats');
  const expected = await statisticsOfTheRows();
  expect(body).toMatchObject(expected);
  const decidedPerDay = (body.decisions_over_time as Array<Record<string, number>>).reduce((sum, day) => sum + day.approved + day.rejected + day.modified, 0);
  const [{ decided }] = await rows<{ decided: string }>("SELECT COUNT(*) AS decided FROM reviews WHERE status <> 'pending'");
  expect(decidedPerDay).toBe(Number(decided));
}

describe('statistics under concurrent writes', () => {
  it('stay exact while creates and decisions of the same kinds run at once', async () => {
    const created = await Promise.all(
      Array.from({ length: 96 }, (_, i) =>
        call(server.url, 'POST', '/reviews', {
          task_type: TASK_TYPES[i % TASK_TYPES.length],
          urgency: URGENCIES[i % URGENCIES.length],
          proposed_action: `Refund order ${5000 + i}`,
          confidence_score: (i % 10) / 10,
        }),
      ),
    );
    expect(created.map((answer) => answer.status)).toEqual(created.map(() => 201));
    const decisions = [{ decision_type: 'approve' }, { decision_type: 'reject' }, { decision_type: 'modify', modified_action: 'Refund half' }];
    const decided = await Promise.all(
      created
        .filter((_, i) => i % 3 !== 0)
        .map(({ body }, i) => call(server.url, 'POST', `/reviews/${body.id}/decide`, decisions[i % decisions.length])),
    );
    expect(decided.map((answer) => answer.status)).toEqual(decided.map(() => 200));

    await expectStatisticsOfTheRows();
  });

  /**
   * Two transactions on connections whose tally slots are the same or not, each inserting a review
   * of one kind; the second commits while the first is still open. Had the second to wait for the
   * first's tally row, it would fail (lock_timeout), not hang: the first does not commit until the
   * second is through.
   */
  async function twoCreatesAtOnce(sameSlot: boolean, taskType: string): Promise<void> {
    const clients: pg.Client[] = [];
    const connect = async (): Promise<pg.Client> => {
      const client = new pg.Client({ connectionString: server.config.database_url });
      await client.connect();
      clients.push(client);
      return client;
    };
    const slotOf = async (client: pg.Client): Promise<number> => (await client.query<{ slot: number }>('SELECT pg_backend_pid() % 8 AS slot')).rows[0].slot;
    const insert = `INSERT INTO reviews (task_type, proposed_action, urgency, metadata, status, created_at, updated_at)
                    VALUES ('${taskType}', 'Pay supplier 77', 'high', '{}', 'pending', 1, 1)`;
    try {
      const first = await connect();
      let second = await connect();
      // One slot per connection (its backend's pid): a few tries find one in the same slot, or another.
      while (((await slotOf(second)) === (await slotOf(first))) !== sameSlot) second = await connect();
      await first.query('BEGIN');
      await first.query(insert);
      await second.query('BEGIN');
      await second.query("SET LOCAL lock_timeout = '10s'");
      await second.query(insert);
      await second.query('COMMIT');
      await first.query('COMMIT');
    } finally {
      for (const client of clients) await client.end();
    }
  }

  it.runIf(TEST_DATABASE_URL)('on PostgreSQL, lets two creates of one kind run without waiting for each other', async () => {
    await twoCreatesAtOnce(false, 'payout');
    expect(await rows("SELECT slot FROM review_tallies WHERE task_type = 'payout' ORDER BY slot")).toHaveLength(2);
    await expectStatisticsOfTheRows();
  });

  it.runIf(TEST_DATABASE_URL)('on PostgreSQL, lets two creates of one kind in one slot run without waiting for each other: the tallies are added to at COMMIT', async () => {
    await twoCreatesAtOnce(true, 'invoice');
    await expectStatisticsOfTheRows();
  });

  it.runIf(TEST_DATABASE_URL)('on PostgreSQL, folds the slots back into one row per kind when the migration is undone', async () => {
    const context = server.test.sequelize.getQueryInterface();
    await tallySlots.down({ context });
    try {
      const spread = await rows('SELECT 1 FROM review_tallies GROUP BY organization_id, task_type, framework, urgency, status HAVING COUNT(*) > 1');
      expect(spread).toEqual([]);
      await expectStatisticsOfTheRows();
    } finally {
      await tallySlots.up({ context });
    }
    await expectStatisticsOfTheRows();
  });
});
