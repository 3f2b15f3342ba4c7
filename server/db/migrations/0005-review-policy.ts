import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * What the review policy records on a review: the team it went to, the rule that routed it,
 * and when it expires. The partial index holds only pending reviews with a limit, so the
 * expiry timer finds the next one to expire without scanning decided history.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('reviews', 'assigned_team', { type: DataTypes.STRING(255), allowNull: true });
  await queryInterface.addColumn('reviews', 'routing_rule', { type: DataTypes.STRING(255), allowNull: true });
  await queryInterface.addColumn('reviews', 'expires_at', { type: DataTypes.BIGINT, allowNull: true });
  await queryInterface.sequelize.query("CREATE INDEX reviews_expiry ON reviews (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL");
  // "Mine" lists and the default reviewers' workload count pending reviews per assignee.
  await queryInterface.addIndex('reviews', ['assigned_to', 'status'], { name: 'reviews_assigned_status' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('reviews', 'reviews_assigned_status');
  await queryInterface.removeIndex('reviews', 'reviews_expiry');
  await queryInterface.removeColumn('reviews', 'expires_at');
  await queryInterface.removeColumn('reviews', 'routing_rule');
  await queryInterface.removeColumn('reviews', 'assigned_team');
}
