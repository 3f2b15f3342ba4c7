import type { QueryInterface } from 'sequelize';
import { KEY, postgresTallyFunction } from './0006-statistics-tallies';

/**
 * On PostgreSQL every create of one organization, task type and urgency added to the same
 * `review_tallies` row, and held that row's lock until COMMIT: creates of one kind ran one
 * at a time, however many connections there were. Each key now has up to `SLOTS` rows, and
 * GET /stats, which already adds rows up, reads the same sums.
 *
 * The slot is the connection's (its backend pid), not a random one per change: a transaction
 * then takes all its tally locks in one slot, so two transactions meet only when they share a
 * slot, and then in the same order they always did (old key, then new) — a random slot per
 * change could let one transaction take two slots in the order another takes them in reverse,
 * and deadlock. A slot's row may go negative (a review added in one slot, decided in
 * another); only the sum over a key's slots means anything.
 *
 * SQLite has one writer at a time, so its tallies stay one row per key.
 */
const SLOTS = 8;
const SLOT = `pg_backend_pid() % ${SLOTS}`;

const TALLY_KEY = KEY.join(', ');
const DAY_KEY = 'day, organization_id, status';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  await run('ALTER TABLE review_tallies ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0');
  await run('ALTER TABLE decision_days ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0');
  await run('DROP INDEX review_tallies_unique');
  await run('DROP INDEX decision_days_unique');
  await run(`CREATE UNIQUE INDEX review_tallies_unique ON review_tallies (${TALLY_KEY}, slot) NULLS NOT DISTINCT`);
  await run(`CREATE UNIQUE INDEX decision_days_unique ON decision_days (${DAY_KEY}, slot) NULLS NOT DISTINCT`);
  await run(postgresTallyFunction(SLOT));
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  await run(postgresTallyFunction(null));
  // Each key's slots folded back into its one row.
  await run(`CREATE TEMPORARY TABLE folded_tallies AS
               SELECT ${TALLY_KEY}, SUM(reviews) AS reviews, SUM(confidence_sum) AS confidence_sum, SUM(confidence_count) AS confidence_count,
                      SUM(decided) AS decided, SUM(decision_ms_sum) AS decision_ms_sum
                 FROM review_tallies GROUP BY ${TALLY_KEY}`);
  await run(`CREATE TEMPORARY TABLE folded_days AS SELECT ${DAY_KEY}, SUM(decisions) AS decisions FROM decision_days GROUP BY ${DAY_KEY}`);
  await run('DELETE FROM review_tallies');
  await run('DELETE FROM decision_days');
  await run('DROP INDEX review_tallies_unique');
  await run('DROP INDEX decision_days_unique');
  await run('ALTER TABLE review_tallies DROP COLUMN slot');
  await run('ALTER TABLE decision_days DROP COLUMN slot');
  await run(`INSERT INTO review_tallies (${TALLY_KEY}, reviews, confidence_sum, confidence_count, decided, decision_ms_sum)
               SELECT ${TALLY_KEY}, reviews, confidence_sum, confidence_count, decided, decision_ms_sum FROM folded_tallies`);
  await run(`INSERT INTO decision_days (${DAY_KEY}, decisions) SELECT ${DAY_KEY}, decisions FROM folded_days`);
  await run(`CREATE UNIQUE INDEX review_tallies_unique ON review_tallies (${TALLY_KEY}) NULLS NOT DISTINCT`);
  await run(`CREATE UNIQUE INDEX decision_days_unique ON decision_days (${DAY_KEY}) NULLS NOT DISTINCT`);
  await run('DROP TABLE folded_tallies');
  await run('DROP TABLE folded_days');
}
