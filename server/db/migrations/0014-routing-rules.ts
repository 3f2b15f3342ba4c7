import { DataTypes, type QueryInterface } from 'sequelize';

/** An organization's routing rules (hosted edition): the self-hosted `routing` setting's engine, kept in the database. */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('routing_rules', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    name: { type: DataTypes.STRING(100), allowNull: false },
    // The higher is tried first; ties by the lower id.
    priority: { type: DataTypes.INTEGER, allowNull: false },
    // JSON object: field or metadata path → condition, as in the routing setting.
    conditions: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    assign_to_user_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' } },
    assign_to_team_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'teams', key: 'id' } },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  // A rule's name is how a review records what routed it: one name, one rule.
  await queryInterface.addIndex('routing_rules', ['organization_id', 'name'], { name: 'routing_rules_name', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('routing_rules');
}
