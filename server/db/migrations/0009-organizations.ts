import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The hosted edition's tenants and their credentials. An API key is stored only as the SHA-256
 * of the key (a leaked table gives no usable key) beside a short prefix people recognise it by.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('organizations', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    // JSON object of the organization's settings.
    settings: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.createTable('api_keys', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    name: { type: DataTypes.STRING(200), allowNull: false },
    prefix: { type: DataTypes.STRING(16), allowNull: false },
    key_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    // admin | agent
    scope: { type: DataTypes.STRING(16), allowNull: false },
    agent_id: { type: DataTypes.INTEGER, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    last_used_at: { type: DataTypes.BIGINT, allowNull: true },
    revoked_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  await queryInterface.addIndex('api_keys', ['organization_id'], { name: 'api_keys_organization' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('api_keys');
  await queryInterface.dropTable('organizations');
}
