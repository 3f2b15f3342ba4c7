import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The agents waiting on reviews right now, one row per wait (a blocking create, a long-poll, an
 * MCP `request_review`), written when the wait starts and removed when it ends. A review's
 * `waiting_until` is the latest `until` among its rows that has not passed, so the rows of a
 * process that died without removing them stop counting at their own `until`. `process_id`
 * says which API process holds the wait, so a process that shuts down can remove its own.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('review_waits', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: { type: DataTypes.INTEGER, allowNull: false },
    process_id: { type: DataTypes.STRING(36), allowNull: false },
    until: { type: DataTypes.BIGINT, allowNull: false },
  });
  // A page's reviews are looked up by id; "is anyone waiting" scans the few live rows by time.
  await queryInterface.addIndex('review_waits', ['review_id', 'until'], { name: 'review_waits_review' });
  await queryInterface.addIndex('review_waits', ['process_id'], { name: 'review_waits_process' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('review_waits');
}
