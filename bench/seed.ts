import pg from 'pg';
import sqlite3 from 'sqlite3';

export interface SeedOptions {
  /** How many reviews to add. */
  count: number;
  /** One review in this many stays pending; the rest are decided (1: all pending). */
  pendingEvery: number;
  /** The newest review is created at this time; earlier ones every 30 s before it. */
  now: number;
  /** The organization the reviews belong to (hosted edition); none: the self-hosted installation's. */
  organizationId?: number;
}

/** Runs one script of statements on the seeded database. */
type Exec = (sql: string) => Promise<void>;

async function withSqlite(file: string, work: (exec: Exec) => Promise<void>): Promise<void> {
  const database = new sqlite3.Database(file);
  const exec: Exec = (sql) => new Promise((resolve, reject) => database.exec(sql, (error) => (error ? reject(error) : resolve())));
  try {
    await exec('PRAGMA synchronous = OFF; PRAGMA cache_size = -262144; BEGIN');
    await work(exec);
    await exec('COMMIT; PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    await new Promise<void>((resolve) => database.close(() => resolve()));
  }
}

async function withPostgres(url: string, work: (exec: Exec) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const exec: Exec = async (sql) => void (await client.query(sql));
  try {
    // No enclosing transaction: each chunk commits, which lets PostgreSQL prune the row versions
    // the tally triggers leave behind (in one transaction, every update of a tally row walks all
    // the versions before it).
    await exec('SET synchronous_commit = off');
    await work(exec);
    // As autovacuum leaves a table that has been in use: fresh statistics for the planner, and
    // a visibility map that lets index-only scans (the pages of a list) skip the table.
    await exec('VACUUM ANALYZE');
    // The tallies too: a server's creates each update a tally row in a transaction of their own,
    // whose old versions are pruned as it goes, so the tables stay a few pages. A chunk of the
    // seed updates the same rows tens of thousands of times in one transaction, and leaves them
    // spread over megabytes (21 MB for 112 rows after 200,000 reviews) that `GET /stats` would
    // read through on every call, and that no plain VACUUM gives back.
    await exec('VACUUM (FULL, ANALYZE) review_tallies, decision_days');
  } finally {
    await client.end();
  }
}

/**
 * Fills a migrated Greenlight database (the server stopped) with a plausible history, in SQL
 * alone: a recursive counter generates the rows inside SQLite, which is what makes a million
 * of them take seconds rather than the minutes a million HTTP creates would. The same SQL
 * runs on SQLite (`database` is the file) and on PostgreSQL (`database` is a postgres:// URL).
 */
/** Rows generated per statement: a bounded recursion, and on PostgreSQL a commit between them. */
const SEED_CHUNK = 50_000;

export async function seedReviews(database: string, options: SeedOptions): Promise<void> {
  const { count, pendingEvery, now, organizationId } = options;
  const first = now - (count - 1) * 30_000;
  const open = database.startsWith('postgres://') ? withPostgres : withSqlite;
  await open(database, async (exec) => {
    for (let from = 0; from < count; from += SEED_CHUNK) {
      const to = Math.min(count, from + SEED_CHUNK);
      await exec(
        `WITH RECURSIVE n(i) AS (SELECT CAST(${from} AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ${to - 1})
         INSERT INTO reviews (organization_id, agent_id, task_type, proposed_action, agent_reasoning, confidence_score, urgency,
                              framework, metadata, status, assigned_to, created_at, updated_at, decided_at)
         SELECT ${organizationId ?? 'NULL'},
                i % 40 + 1,
                CASE i % 8 WHEN 0 THEN 'refund' WHEN 1 THEN 'deploy' WHEN 2 THEN 'email_send' WHEN 3 THEN 'db_migration'
                           WHEN 4 THEN 'access_grant' WHEN 5 THEN 'payment' WHEN 6 THEN 'data_export' ELSE 'config_change' END,
                'Refund order #' || (100000 + i) || ' in full (EUR ' || (i % 900 + 10) || '.00) to the original card ending 4242.',
                'The carrier confirms the parcel was lost in transit; the customer has been waiting ' || (i % 20 + 1) || ' days.',
                CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 7919) % 1000) / 1000.0 END,
                CASE WHEN i % 20 = 0 THEN 'critical' WHEN i % 10 < 3 THEN 'high' WHEN i % 10 < 7 THEN 'medium' ELSE 'low' END,
                CASE i % 5 WHEN 0 THEN 'langchain' WHEN 1 THEN 'crewai' WHEN 2 THEN 'autogen' WHEN 3 THEN 'openai-agents' ELSE NULL END,
                '{"order":{"id":' || (100000 + i) || ',"currency":"EUR"},"customer":{"tier":"gold"}}',
                CASE WHEN i % ${pendingEvery} = 0 THEN 'pending' WHEN i % 3 = 0 THEN 'approved' WHEN i % 3 = 1 THEN 'rejected' ELSE 'modified' END,
                CASE i % 4 WHEN 0 THEN 'alice' WHEN 1 THEN 'bob' ELSE NULL END,
                ${first} + i * 30000,
                ${first} + i * 30000,
                CASE WHEN i % ${pendingEvery} = 0 THEN NULL ELSE ${first} + i * 30000 + 60000 + (i % 600) * 1000 END
           FROM n`,
      );
    }
    await exec(
      `INSERT INTO decisions (review_id, organization_id, decision_type, reviewer_id, reviewer_name, modified_action, notes, created_at)
       SELECT id, organization_id,
              CASE status WHEN 'approved' THEN 'approve' WHEN 'rejected' THEN 'reject' ELSE 'modify' END,
              NULL, 'seeded reviewer',
              CASE status WHEN 'modified' THEN 'Refund half instead.' ELSE NULL END,
              NULL, decided_at
         FROM reviews WHERE status <> 'pending' AND id NOT IN (SELECT review_id FROM decisions)`,
    );
  });
}
