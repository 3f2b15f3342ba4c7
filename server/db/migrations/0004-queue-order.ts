import type { QueryInterface } from 'sequelize';

/**
 * The reviewer's queue is ordered most urgent first, then oldest first. An index on that
 * very expression lets SQLite (and PostgreSQL) walk the queue in order instead of sorting
 * every pending review; `URGENCY_RANK_SQL` in the store must stay the same expression.
 */
export const URGENCY_RANK_SQL = "(CASE urgency WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END)";

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.sequelize.query(`CREATE INDEX reviews_queue ON reviews (status, ${URGENCY_RANK_SQL}, id)`);
  // History lists and decisions-over-time read by decision time.
  await queryInterface.addIndex('reviews', ['decided_at'], { name: 'reviews_decided_at' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('reviews', 'reviews_decided_at');
  await queryInterface.removeIndex('reviews', 'reviews_queue');
}
