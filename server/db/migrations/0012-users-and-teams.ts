import { DataTypes, type QueryInterface } from 'sequelize';

/** The people of an organization (hosted edition) and the teams they form. */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('users', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    // Kept in lower case: one person, one address, however it is typed.
    email: { type: DataTypes.STRING(320), allowNull: false },
    name: { type: DataTypes.STRING(200), allowNull: false },
    // admin | reviewer | viewer
    role: { type: DataTypes.STRING(16), allowNull: false },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('users', ['organization_id', 'email'], { name: 'users_email', unique: true });
  await queryInterface.createTable('teams', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    name: { type: DataTypes.STRING(200), allowNull: false },
    // JSON object.
    settings: { type: DataTypes.TEXT, allowNull: false, defaultValue: '{}' },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('teams', ['organization_id'], { name: 'teams_organization' });
  await queryInterface.createTable('team_members', {
    team_id: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true, references: { model: 'teams', key: 'id' } },
    user_id: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true, references: { model: 'users', key: 'id' } },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('team_members');
  await queryInterface.dropTable('teams');
  await queryInterface.dropTable('users');
}
