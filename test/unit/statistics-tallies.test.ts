import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlite as openDatabaseFile } from '../../server/db/sqlite';
import { migrate } from '../../server/db/migrate';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { type DecisionType, type ReviewOrder, STATUS_AFTER, URGENCIES, type Urgency } from '../../server/domain/reviews/records';
import { call, startTestServer, type TestServer } from '../support/server';
import { openSqlite, type SqliteShell as Shell } from '../support/sqlite';
import { makeTempDir } from '../support/temp';
import { INSTALLATION } from '../../server/domain/shared/principal';

async function countsBy(shell: Shell, sql: string): Promise<Record<string, number>> {
  const rows = await shell.all<{ key: string; count: number }>(sql);
  return Object.fromEntries(rows.map(({ key, count }) => [key, count]));
}

const TASK_TYPES = ['refund', 'email', 'tag', 'deploy'];
const ACTIONS = ['Refund order', 'Send email', 'Tag ticket', 'Deploy build'];
const FRAMEWORKS = ['langchain', 'crewai', 'autogen'];

/** Varied on every column GET /stats and GET /reviews group or filter by, nulls included. */
function reviewBody(i: number) {
  return {
    task_type: TASK_TYPES[i % 4],
    proposed_action: `${ACTIONS[i % 4]} ${1000 + i}`,
    urgency: URGENCIES[Math.floor(i / 3) % 4],
    // Confident tags are the ones the `sure-tags` rule approves on arrival.
    confidence_score: i % 5 === 0 ? null : i % 8 === 2 ? 0.99 : ((i * 7) % 20) / 20,
    framework: i % 3 === 0 ? null : FRAMEWORKS[(i >> 1) % 3],
    organization_id: i % 6 === 0 ? null : (i % 2) + 1,
    agent_id: i % 4 === 3 ? null : (i % 3) + 1,
  };
}

const REVIEWS = 40;
const DAY_MS = 86_400_000;

let temp: ReturnType<typeof makeTempDir>;
let server: TestServer;
let shell: Shell;
// Ten minutes before midnight UTC, so the history spans two days of decisions.
let clock = Date.parse('2026-11-21T23:50:00.000Z');

/**
 * A history that exercises every path that writes a review: creates, automatic approval by
 * a rule, approve, reject and modify by a person (some in the same millisecond), and expiry
 * at start-up for critical reviews left pending while the server was down.
 */
beforeAll(async () => {
  temp = makeTempDir('greenlight-tallies-');
  const config = {
    data_dir: temp.dir,
    database_url: `sqlite:${path.join(temp.dir, 'greenlight.db')}`,
    routing: compilePolicy({
      rules: [{ name: 'sure-tags', priority: 1, conditions: { task_type: 'tag', confidence_score: { operator: '>=', value: 0.95 } }, auto_decide: 'approve' }],
      default_reviewers: ['ana@example.com', 'ben@example.com'],
      expiry: { critical: '5m' },
    }),
  };
  const first = await startTestServer(config, { clock: () => clock });
  const created: Array<{ id: number; status: string }> = [];
  for (let i = 0; i < REVIEWS; i++) {
    created.push((await call(first.url, 'POST', '/reviews', reviewBody(i))).body);
    clock += 45_000;
  }
  for (const [i, review] of created.entries()) {
    if (review.status !== 'pending' || i % 5 === 4) continue;
    const decision = i % 3 === 0 ? { decision_type: 'modify', modified_action: 'Something smaller' } : { decision_type: i % 3 === 1 ? 'approve' : 'reject' };
    expect((await call(first.url, 'POST', `/reviews/${review.id}/decide`, decision)).status).toBe(200);
    if (i % 2 === 0) clock += 61_000;
  }
  await first.close();
  clock += 3_600_000;
  server = await startTestServer(config, { clock: () => clock });
  shell = await openSqlite(path.join(temp.dir, 'greenlight.db'));
});

afterAll(async () => {
  await shell?.close();
  await server?.dispose();
  temp.remove();
});

describe('GET /stats over a mixed history', () => {
  it('covers every way a review gets decided, and some stay pending', async () => {
    const deciders = await shell.all<{ decider: string }>(
      "SELECT DISTINCT CASE WHEN reviewer_name IS NULL THEN decision_type ELSE reviewer_name END AS decider FROM decisions ORDER BY 1",
    );
    expect(deciders.map((row) => row.decider)).toEqual(['approve', 'modify', 'policy:expired', 'reject', 'rule:sure-tags']);
    expect((await shell.all("SELECT id FROM reviews WHERE status = 'pending'")).length).toBeGreaterThan(0);
  });

  it('reports the same figures as aggregating the reviews and decisions tables', async () => {
    const [{ total }] = await shell.all<{ total: number }>('SELECT COUNT(*) AS total FROM reviews');
    const statuses = await countsBy(shell, 'SELECT status AS key, COUNT(*) AS count FROM reviews GROUP BY status');
    const [{ confidence }] = await shell.all<{ confidence: number }>('SELECT AVG(confidence_score) AS confidence FROM reviews');
    const [{ seconds }] = await shell.all<{ seconds: number }>(
      'SELECT AVG(d.created_at - r.created_at) / 1000.0 AS seconds FROM decisions d JOIN reviews r ON r.id = d.review_id',
    );

    const stats = await call(server.url, 'GET', '/stats');

    expect(stats.body).toEqual({
      total_reviews: total,
      pending_reviews: statuses.pending,
      approved_reviews: statuses.approved,
      rejected_reviews: statuses.rejected,
      modified_reviews: statuses.modified,
      avg_confidence_score: expect.closeTo(confidence, 8),
      // To the millisecond the rows keep (the figure is rounded to nine significant digits).
      avg_seconds_to_decision: expect.closeTo(seconds, 3),
      task_type_breakdown: await countsBy(shell, 'SELECT task_type AS key, COUNT(*) AS count FROM reviews GROUP BY task_type'),
      framework_breakdown: await countsBy(shell, 'SELECT framework AS key, COUNT(*) AS count FROM reviews WHERE framework IS NOT NULL GROUP BY framework'),
      urgency_breakdown: await countsBy(shell, 'SELECT urgency AS key, COUNT(*) AS count FROM reviews GROUP BY urgency'),
      decisions_over_time: expect.any(Array),
    });
  });

  it('counts decisions per day as the decisions table records them, up to today', async () => {
    const perDay = await shell.all<{ date: string; decision_type: DecisionType; count: number }>(
      "SELECT date(created_at / 1000, 'unixepoch') AS date, decision_type, COUNT(*) AS count FROM decisions GROUP BY 1, 2",
    );
    const counts = new Map<string, Record<string, number>>();
    for (const { date, decision_type, count } of perDay) {
      counts.set(date, { approved: 0, rejected: 0, modified: 0, ...counts.get(date), [STATUS_AFTER[decision_type]]: count });
    }

    const days: Array<{ date: string }> = (await call(server.url, 'GET', '/stats')).body.decisions_over_time;

    expect(days.at(-1)?.date).toBe(new Date(clock).toISOString().slice(0, 10));
    expect(days.map((day) => day.date)).toEqual(expect.arrayContaining([...counts.keys()]));
    expect(days).toEqual(days.map(({ date }) => ({ date, approved: 0, rejected: 0, modified: 0, ...counts.get(date) })));
  });
});

interface ListedRow {
  id: number;
  urgency: Urgency;
  decided_at: number | null;
}

const URGENCY_RANK: Record<Urgency, number> = { critical: 0, high: 1, medium: 2, low: 3 };

type Compare = (a: ListedRow, b: ListedRow) => number;

/** The orders as the OpenAPI document describes them, written out independently of the store's SQL. */
const byPriority: Compare = (a, b) => URGENCY_RANK[a.urgency] - URGENCY_RANK[b.urgency] || a.id - b.id;

const SORTS: Record<ReviewOrder, Compare> = {
  newest: (a, b) => b.id - a.id,
  oldest: (a, b) => a.id - b.id,
  priority: byPriority,
  // No agent waits on these rows: reviews nobody waits on come in priority order.
  waiting_until: byPriority,
  // Undecided reviews last.
  recently_decided: (a, b) => (b.decided_at ?? -1) - (a.decided_at ?? -1) || b.id - a.id,
};

const PAGE_SIZE = 6;

interface Page {
  total: number;
  reviews: Array<{ id: number }>;
}

/** Walks every page in every sort, one past the last (which must be empty), against the rows SQL selects with `where`. */
async function expectPagesLikeSql(where: string, listPage: (sort: ReviewOrder, page: number) => Promise<Page>): Promise<void> {
  const matching = await shell.all<ListedRow>(`SELECT id, urgency, decided_at FROM reviews WHERE ${where}`);
  const [{ count }] = await shell.all<{ count: number }>(`SELECT COUNT(*) AS count FROM reviews WHERE ${where}`);
  for (const [sort, compare] of Object.entries(SORTS) as Array<[ReviewOrder, Compare]>) {
    const listed: number[] = [];
    const totals = new Set<number>();
    for (let page = 1; page <= Math.ceil(count / PAGE_SIZE) + 1; page++) {
      const { total, reviews } = await listPage(sort, page);
      totals.add(total);
      listed.push(...reviews.map((review) => review.id));
    }
    expect({ sort, totals: [...totals], listed }).toEqual({ sort, totals: [count], listed: [...matching].sort(compare).map((row) => row.id) });
  }
}

describe('GET /reviews', () => {
  // The first group is counted from the tallies, the rest by scanning the reviews.
  it.each([
    { query: '', where: '1 = 1' },
    { query: 'status=pending', where: "status = 'pending'" },
    { query: 'decided=true', where: "status <> 'pending'" },
    { query: 'decided=false', where: "status = 'pending'" },
    { query: 'task_type=refund', where: "task_type = 'refund'" },
    { query: 'task_type=unknown', where: "task_type = 'unknown'" },
    { query: 'urgency=critical', where: "urgency = 'critical'" },
    { query: 'status=approved&organization_id=1', where: "status = 'approved' AND organization_id = 1" },
    { query: 'decided=true&task_type=tag&urgency=low&framework=crewai', where: "status <> 'pending' AND task_type = 'tag' AND urgency = 'low' AND framework = 'crewai'" },
    { query: 'q=ORDER', where: "proposed_action LIKE '%order%'" },
    { query: 'agent_id=2', where: 'agent_id = 2' },
    { query: 'assigned_to=ana%40example.com', where: "assigned_to = 'ana@example.com'" },
    { query: 'q=ticket&decided=false', where: "proposed_action LIKE '%ticket%' AND status = 'pending'" },
  ])('answers total and pages as SQL does for ?$query, in every sort', async ({ query, where }) => {
    await expectPagesLikeSql(where, async (sort, page) => (await call(server.url, 'GET', `/reviews?${query}&sort=${sort}&page=${page}&page_size=${PAGE_SIZE}`)).body);
  });

  // The numeric filters once more below the route, so the store's counting of them is proven whatever the route passes on.
  it.each([
    { filters: { status: 'approved', organization_id: 1 } as const, where: "status = 'approved' AND organization_id = 1" },
    { filters: { organization_id: 2, decided: false }, where: "organization_id = 2 AND status = 'pending'" },
    { filters: { agent_id: 2 }, where: 'agent_id = 2' },
  ])('the review service lists $filters as SQL selects them', async ({ filters, where }) => {
    await expectPagesLikeSql(where, (sort, page) => server.test.reviews.reading.list(INSTALLATION, filters, page, PAGE_SIZE, sort));
  });
});

const KEY = 'organization_id, task_type, framework, urgency, status';

/** Tally rows that went to zero stay in the table; they count for nothing. */
const TALLIES = `SELECT ${KEY}, SUM(reviews) AS reviews, ROUND(SUM(confidence_sum), 9) + 0.0 AS confidence_sum, SUM(confidence_count) AS confidence_count,
                        SUM(decided) AS decided, SUM(decision_ms_sum) AS decision_ms_sum
                   FROM review_tallies GROUP BY ${KEY}
                 HAVING SUM(reviews) <> 0 OR ROUND(SUM(confidence_sum), 9) <> 0 OR SUM(confidence_count) <> 0 OR SUM(decided) <> 0 OR SUM(decision_ms_sum) <> 0
                  ORDER BY ${KEY}`;
const REVIEW_AGGREGATES = `SELECT ${KEY}, COUNT(*) AS reviews, ROUND(COALESCE(SUM(confidence_score), 0), 9) AS confidence_sum,
                                  COUNT(confidence_score) AS confidence_count, COUNT(decided_at) AS decided,
                                  COALESCE(SUM(decided_at - created_at), 0) AS decision_ms_sum
                             FROM reviews GROUP BY ${KEY} ORDER BY ${KEY}`;
const DECISION_DAYS = `SELECT organization_id, day, status, SUM(decisions) AS decisions FROM decision_days
                        GROUP BY organization_id, day, status HAVING SUM(decisions) <> 0 ORDER BY organization_id, day, status`;
const DECIDED_PER_DAY = `SELECT organization_id, decided_at / ${DAY_MS} AS day, status, COUNT(*) AS decisions FROM reviews
                          WHERE decided_at IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

async function talliesAndAggregates(shell: Shell) {
  return {
    tallies: { reviews: await shell.all(TALLIES), days: await shell.all(DECISION_DAYS) },
    aggregates: { reviews: await shell.all(REVIEW_AGGREGATES), days: await shell.all(DECIDED_PER_DAY) },
  };
}

/**
 * Sixty reviews over two and a half days, written straight into the table, with every column
 * the tallies key on varying independently and nulls where the schema allows them.
 */
const RAW_REVIEWS = `
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 59)
  INSERT INTO reviews (organization_id, task_type, proposed_action, confidence_score, urgency, framework, metadata, status,
                       created_at, updated_at, decided_at)
  SELECT CASE i % 3 WHEN 0 THEN NULL ELSE i % 3 END,
         CASE i % 4 WHEN 0 THEN 'refund' WHEN 1 THEN 'email' ELSE 'tag' END,
         'action ' || i,
         CASE WHEN i % 5 = 0 THEN NULL ELSE (i % 10) / 10.0 END,
         CASE (i / 2) % 4 WHEN 0 THEN 'low' WHEN 1 THEN 'medium' WHEN 2 THEN 'high' ELSE 'critical' END,
         CASE WHEN i % 7 = 0 THEN NULL ELSE 'langchain' END,
         '{}',
         CASE (i / 3) % 4 WHEN 0 THEN 'pending' WHEN 1 THEN 'approved' WHEN 2 THEN 'rejected' ELSE 'modified' END,
         created, created,
         CASE WHEN (i / 3) % 4 = 0 THEN NULL ELSE created + 1000 * i + 7 END
    FROM (SELECT i, ${Date.parse('2026-03-01T00:00:00.000Z')} + i * 3600000 AS created FROM n)`;

/** A database whose reviews were stored before migration 0006, then migrated to it. */
async function upgradedDatabase(dir: string) {
  const file = path.join(dir, 'greenlight.db');
  const db = openDatabaseFile(file);
  await migrate(db.sequelize, { to: '0005-review-policy' });
  const shell = await openSqlite(file);
  await shell.exec(RAW_REVIEWS);
  const applied = await migrate(db.sequelize);
  return { db, shell, applied };
}

/** One after the other: each edits what the ones before left. */
const HAND_EDITS = [
  "UPDATE reviews SET status = 'approved', decided_at = created_at + 90000 WHERE status = 'pending' AND id % 2 = 0",
  "UPDATE reviews SET task_type = 'renamed', framework = NULL WHERE id % 5 = 1",
  'UPDATE reviews SET confidence_score = NULL WHERE id % 3 = 0',
  'UPDATE reviews SET confidence_score = 0.25 WHERE confidence_score IS NULL AND id % 2 = 1',
  "UPDATE reviews SET status = 'pending', decided_at = NULL WHERE status = 'rejected'",
  `UPDATE reviews SET decided_at = decided_at + ${DAY_MS} WHERE decided_at IS NOT NULL AND id % 4 = 1`,
  'UPDATE reviews SET created_at = created_at - 5000 WHERE id % 4 = 2',
  "UPDATE reviews SET urgency = 'critical', organization_id = 9 WHERE id % 7 = 3",
  // Columns the tallies do not count: nothing moves.
  "UPDATE reviews SET proposed_action = 'edited', assigned_to = 'dana'",
  'DELETE FROM reviews WHERE id % 6 = 0',
  "DELETE FROM reviews WHERE status = 'modified'",
  "INSERT INTO reviews (task_type, proposed_action, urgency, metadata, status, created_at, updated_at, decided_at) VALUES ('late', 'x', 'low', '{}', 'approved', 5, 5, 8)",
];

describe('migration 0006', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let upgraded: Awaited<ReturnType<typeof upgradedDatabase>>;
  beforeAll(async () => {
    dir = makeTempDir('greenlight-backfill-');
    upgraded = await upgradedDatabase(dir.dir);
  });
  afterAll(async () => {
    await upgraded?.shell.close();
    await upgraded?.db.close();
    dir.remove();
  });

  it('backfills the tallies from the reviews stored before it', async () => {
    const { tallies, aggregates } = await talliesAndAggregates(upgraded.shell);
    expect(upgraded.applied[0]).toBe('0006-statistics-tallies');
    expect(aggregates.reviews.length).toBeGreaterThan(20);
    expect(tallies).toEqual(aggregates);
  });

  it('moves the tallies with every row changed, added or deleted by hand in the sqlite3 shell', async () => {
    for (const statement of HAND_EDITS) {
      await upgraded.shell.exec(statement);
      const { tallies, aggregates } = await talliesAndAggregates(upgraded.shell);
      expect({ after: statement, ...tallies }).toEqual({ after: statement, ...aggregates });
    }
  });
});
