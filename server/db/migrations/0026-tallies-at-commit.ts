import type { QueryInterface } from 'sequelize';
import { COUNTED } from './0006-statistics-tallies';

const EVENTS = `INSERT OR UPDATE OF ${COUNTED.join(', ')} OR DELETE ON reviews`;

/**
 * On PostgreSQL the tallies are added to at COMMIT rather than at each change: a deferred
 * trigger. A tally slot's row stays locked until its transaction ends; taken at the INSERT, it
 * was held through the rest of the create — two more round trips to a Node process that, with
 * several API processes on few cores, may be slow to send them — and creates sharing a slot
 * queued behind it (with four processes, most of a create's time was spent waiting for that
 * lock). Taken at COMMIT, it is held only while the commit is written. What is counted is the
 * same: each change's old and new row, as the trigger always saw them.
 *
 * SQLite has one writer at a time; its triggers stay as they are.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  await queryInterface.sequelize.query('DROP TRIGGER reviews_tally ON reviews');
  await queryInterface.sequelize.query(
    `CREATE CONSTRAINT TRIGGER reviews_tally AFTER ${EVENTS} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION reviews_tally()`,
  );
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  await queryInterface.sequelize.query('DROP TRIGGER reviews_tally ON reviews');
  await queryInterface.sequelize.query(`CREATE TRIGGER reviews_tally AFTER ${EVENTS} FOR EACH ROW EXECUTE FUNCTION reviews_tally()`);
}
