import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Reviews and their decisions. Times are epoch milliseconds (INTEGER): compact, index-friendly
 * and the same arithmetic on SQLite and PostgreSQL. Every tenant-owned table carries
 * `organization_id` from the start (null in the self-hosted edition) so the hosted edition
 * needs no data migration.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('reviews', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    agent_id: { type: DataTypes.INTEGER, allowNull: true },
    task_type: { type: DataTypes.STRING(255), allowNull: false },
    proposed_action: { type: DataTypes.TEXT, allowNull: false },
    agent_reasoning: { type: DataTypes.TEXT, allowNull: true },
    confidence_score: { type: DataTypes.DOUBLE, allowNull: true },
    urgency: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'medium' },
    framework: { type: DataTypes.STRING(255), allowNull: true },
    metadata: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
    assigned_to: { type: DataTypes.STRING(255), allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
    decided_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  // Listing is newest first (id order) with optional equality filters.
  await queryInterface.addIndex('reviews', ['status', 'id'], { name: 'reviews_status_id' });
  await queryInterface.addIndex('reviews', ['task_type', 'id'], { name: 'reviews_task_type_id' });
  await queryInterface.addIndex('reviews', ['organization_id', 'status'], { name: 'reviews_organization_status' });

  await queryInterface.createTable('decisions', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    review_id: {
      type: DataTypes.INTEGER,
      allowNull: false,
      references: { model: 'reviews', key: 'id' },
      onDelete: 'CASCADE',
    },
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    decision_type: { type: DataTypes.STRING(16), allowNull: false },
    reviewer_id: { type: DataTypes.INTEGER, allowNull: true },
    reviewer_name: { type: DataTypes.STRING(255), allowNull: true },
    modified_action: { type: DataTypes.TEXT, allowNull: true },
    notes: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  // One decision per review, enforced by the database as well as by the decide transaction.
  await queryInterface.addIndex('decisions', ['review_id'], { name: 'decisions_review_id', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('decisions');
  await queryInterface.dropTable('reviews');
}
