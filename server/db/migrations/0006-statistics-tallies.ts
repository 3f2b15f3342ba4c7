import type { QueryInterface } from 'sequelize';

/**
 * GET /stats must answer in milliseconds with a million reviews stored; aggregating the
 * reviews table itself reads every row (seconds at that size). Instead the database keeps
 * running tallies, maintained by triggers in the same transaction as the change they count,
 * so they can never drift from the rows, whichever code (or person with the sqlite3 shell)
 * writes them:
 *
 * - `review_tallies`: one row per combination of the columns GET /stats groups or filters
 *   by, with the counts and sums its averages need;
 * - `decision_days`: decisions per organization, day and outcome, for decisions over time.
 *
 * The combinations number in the hundreds, not millions, so GET /stats aggregates those.
 */
const DAY_MS = 86_400_000;
export const KEY = ['organization_id', 'task_type', 'framework', 'urgency', 'status'] as const;

/** Columns a change to which moves a review's contribution. */
export const COUNTED = [...KEY, 'confidence_score', 'created_at', 'decided_at'];

type Row = 'NEW' | 'OLD';
type Dialect = 'sqlite' | 'postgres';

/** `a IS b` is SQLite's null-safe equality, and can use an index. */
const sameKey = (row: Row): string => KEY.map((column) => `${column} IS ${row}.${column}`).join(' AND ');
const sameDay = (row: Row): string => `organization_id IS ${row}.organization_id AND day = ${row}.decided_at / ${DAY_MS} AND status = ${row}.status`;
const oneIf = (condition: string): string => `(CASE WHEN ${condition} THEN 1 ELSE 0 END)`;

function tallyChange(row: Row, sign: '+' | '-'): string {
  return `UPDATE review_tallies
             SET reviews = reviews ${sign} 1,
                 confidence_sum = confidence_sum ${sign} COALESCE(${row}.confidence_score, 0),
                 confidence_count = confidence_count ${sign} ${oneIf(`${row}.confidence_score IS NOT NULL`)},
                 decided = decided ${sign} ${oneIf(`${row}.decided_at IS NOT NULL`)},
                 decision_ms_sum = decision_ms_sum ${sign} COALESCE(${row}.decided_at - ${row}.created_at, 0)
           WHERE ${sameKey(row)};
          UPDATE decision_days SET decisions = decisions ${sign} 1 WHERE ${row}.decided_at IS NOT NULL AND ${sameDay(row)};`;
}

/** Adds a review's contribution (SQLite), creating its tally rows the first time their combination appears. */
function add(row: Row): string {
  return `INSERT INTO review_tallies (${KEY.join(', ')})
            SELECT ${KEY.map((column) => `${row}.${column}`).join(', ')}
             WHERE NOT EXISTS (SELECT 1 FROM review_tallies WHERE ${sameKey(row)});
          INSERT INTO decision_days (organization_id, day, status)
            SELECT ${row}.organization_id, ${row}.decided_at / ${DAY_MS}, ${row}.status
             WHERE ${row}.decided_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM decision_days WHERE ${sameDay(row)});
          ${tallyChange(row, '+')}`;
}

/**
 * Adds (`+`) or removes (`-`) a review's contribution on PostgreSQL, as one upsert per table
 * through the unique indexes. \`IS NOT DISTINCT FROM\` cannot use an index, so the statements
 * SQLite runs would scan the tallies, and every version of their rows that updates leave
 * behind until a vacuum, on every write. Two transactions meeting a new combination at once
 * meet at the unique index: the second waits for the first and then adds to its row.
 */
function upsertContribution(row: Row, sign: '+' | '-', slot: TallySlot | null): string {
  const signed = (value: string): string => `${sign}(${value})`;
  const key = [...KEY, ...(slot ? ['slot'] : [])].join(', ');
  const keyValues = [...KEY.map((column) => `${row}.${column}`), ...(slot ? [slot] : [])].join(', ');
  const dayKey = slot ? 'day, organization_id, status, slot' : 'day, organization_id, status';
  return `INSERT INTO review_tallies (${key}, reviews, confidence_sum, confidence_count, decided, decision_ms_sum)
            VALUES (${keyValues}, ${signed('1')}, ${signed(`COALESCE(${row}.confidence_score, 0)`)},
                    ${signed(oneIf(`${row}.confidence_score IS NOT NULL`))}, ${signed(oneIf(`${row}.decided_at IS NOT NULL`))},
                    ${signed(`COALESCE(${row}.decided_at - ${row}.created_at, 0)`)})
            ON CONFLICT (${key}) DO UPDATE SET
              reviews = review_tallies.reviews + EXCLUDED.reviews,
              confidence_sum = review_tallies.confidence_sum + EXCLUDED.confidence_sum,
              confidence_count = review_tallies.confidence_count + EXCLUDED.confidence_count,
              decided = review_tallies.decided + EXCLUDED.decided,
              decision_ms_sum = review_tallies.decision_ms_sum + EXCLUDED.decision_ms_sum;
          IF ${row}.decided_at IS NOT NULL THEN
            INSERT INTO decision_days (${dayKey}, decisions)
              VALUES (${row}.decided_at / ${DAY_MS}, ${row}.organization_id, ${row}.status, ${slot ? `${slot}, ` : ''}${signed('1')})
              ON CONFLICT (${dayKey}) DO UPDATE SET decisions = decision_days.decisions + EXCLUDED.decisions;
          END IF;`;
}

const subtract = (row: Row): string => tallyChange(row, '-');

/** An SQL expression choosing which of a key's tally rows a change is added to (migration 0024). */
export type TallySlot = string;

/**
 * The PostgreSQL trigger function that keeps the tallies, adding to the row of `slot` where
 * the tallies are spread over slots, to the key's one row where they are not.
 */
export function postgresTallyFunction(slot: TallySlot | null): string {
  return `CREATE OR REPLACE FUNCTION reviews_tally() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF TG_OP IN ('UPDATE', 'DELETE') THEN ${upsertContribution('OLD', '-', slot)} END IF;
               IF TG_OP IN ('INSERT', 'UPDATE') THEN ${upsertContribution('NEW', '+', slot)} END IF;
               RETURN NULL;
             END $$`;
}

async function createTriggers(run: (sql: string) => Promise<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') {
    await run(`CREATE TRIGGER reviews_tally_insert AFTER INSERT ON reviews BEGIN ${add('NEW')} END`);
    await run(`CREATE TRIGGER reviews_tally_update AFTER UPDATE OF ${COUNTED.join(', ')} ON reviews BEGIN ${subtract('OLD')} ${add('NEW')} END`);
    await run(`CREATE TRIGGER reviews_tally_delete AFTER DELETE ON reviews BEGIN ${subtract('OLD')} END`);
    return;
  }
  await run(`CREATE UNIQUE INDEX review_tallies_unique ON review_tallies (${KEY.join(', ')}) NULLS NOT DISTINCT`);
  await run(`CREATE UNIQUE INDEX decision_days_unique ON decision_days (day, organization_id, status) NULLS NOT DISTINCT`);
  await run(postgresTallyFunction(null));
  await run(`CREATE TRIGGER reviews_tally AFTER INSERT OR UPDATE OF ${COUNTED.join(', ')} OR DELETE ON reviews FOR EACH ROW EXECUTE FUNCTION reviews_tally()`);
}

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  const dialect = queryInterface.sequelize.getDialect() as Dialect;
  await run(`CREATE TABLE review_tallies (
               organization_id INTEGER, task_type VARCHAR(255) NOT NULL, framework VARCHAR(255), urgency VARCHAR(16) NOT NULL,
               status VARCHAR(16) NOT NULL, reviews INTEGER NOT NULL DEFAULT 0, confidence_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
               confidence_count INTEGER NOT NULL DEFAULT 0, decided INTEGER NOT NULL DEFAULT 0, decision_ms_sum BIGINT NOT NULL DEFAULT 0)`);
  await run(`CREATE INDEX review_tallies_key ON review_tallies (${KEY.join(', ')})`);
  await run(`CREATE TABLE decision_days (
               organization_id INTEGER, day INTEGER NOT NULL, status VARCHAR(16) NOT NULL, decisions INTEGER NOT NULL DEFAULT 0)`);
  await run('CREATE INDEX decision_days_key ON decision_days (day, organization_id, status)');

  await run(`INSERT INTO review_tallies (${KEY.join(', ')}, reviews, confidence_sum, confidence_count, decided, decision_ms_sum)
             SELECT ${KEY.join(', ')}, COUNT(*), COALESCE(SUM(confidence_score), 0), COUNT(confidence_score), COUNT(decided_at),
                    COALESCE(SUM(decided_at - created_at), 0)
               FROM reviews GROUP BY ${KEY.join(', ')}`);
  await run(`INSERT INTO decision_days (organization_id, day, status, decisions)
             SELECT organization_id, decided_at / ${DAY_MS}, status, COUNT(*) FROM reviews WHERE decided_at IS NOT NULL
              GROUP BY organization_id, decided_at / ${DAY_MS}, status`);
  await createTriggers(run, dialect);
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() === 'postgres') {
    await queryInterface.sequelize.query('DROP TRIGGER reviews_tally ON reviews');
    await queryInterface.sequelize.query('DROP FUNCTION reviews_tally()');
  } else {
    for (const trigger of ['reviews_tally_delete', 'reviews_tally_update', 'reviews_tally_insert']) {
      await queryInterface.sequelize.query(`DROP TRIGGER ${trigger}`);
    }
  }
  await queryInterface.dropTable('decision_days');
  await queryInterface.dropTable('review_tallies');
}
