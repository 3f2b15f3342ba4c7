import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Approval workflows (hosted edition): an organization's definitions, and the state of each
 * review one governs (its stages as they were when it arrived, the votes so far). The state
 * has a row of its own, so that the reviews table, and the self-hosted edition, are untouched.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('workflows', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    name: { type: DataTypes.STRING(100), allowNull: false },
    // JSON: the routing rules' conditions.
    conditions: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    // JSON: [{name, approvers: {user_ids, team_id, roles}, required_approvals}].
    stages: { type: DataTypes.TEXT, allowNull: false },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('workflows', ['organization_id'], { name: 'workflows_organization' });
  await queryInterface.createTable('review_workflows', {
    review_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'reviews', key: 'id' } },
    organization_id: { type: DataTypes.INTEGER, allowNull: false },
    // JSON: the workflow's state (server/domain/workflows/voting.ts).
    state: { type: DataTypes.TEXT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('review_workflows');
  await queryInterface.dropTable('workflows');
}
