import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Reviews in a chat workspace (Slack): one row per review and provider, written in the
 * transaction that created the review, so a message is owed even when the process dies or
 * the provider is down; `version` counts the review's changes, `synced_version` those the
 * message shows. A person's Slack user, when set by hand, says who clicks as them.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('chat_messages', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    provider: { type: DataTypes.STRING(16), allowNull: false },
    review_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'reviews', key: 'id' }, onDelete: 'CASCADE' },
    // Null: the self-hosted installation.
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    channel: { type: DataTypes.STRING(64), allowNull: false },
    // The provider's id of the message (Slack's ts); null until posted.
    message_id: { type: DataTypes.STRING(64), allowNull: true },
    version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    synced_version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    // active | failed (the provider refused it for good: a bad token, a channel not found)
    status: { type: DataTypes.STRING(16), allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    next_attempt_at: { type: DataTypes.BIGINT, allowNull: false },
    // A process sending it holds it until then; another takes it over if that process died.
    claimed_until: { type: DataTypes.BIGINT, allowNull: true },
    last_error: { type: DataTypes.STRING(500), allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  // One message per review and provider: two processes cannot owe it twice.
  await queryInterface.addIndex('chat_messages', ['review_id', 'provider'], { name: 'chat_messages_review', unique: true });
  await queryInterface.addIndex('chat_messages', ['status', 'next_attempt_at'], { name: 'chat_messages_due' });
  // A hosted organization's Slack workspace, installed with OAuth: its bot token encrypted
  // (AES-256-GCM, `slack_token_key`); null once uninstalled or revoked.
  await queryInterface.createTable('slack_installations', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' } },
    team_id: { type: DataTypes.STRING(32), allowNull: false },
    team_name: { type: DataTypes.STRING(200), allowNull: true },
    bot_user_id: { type: DataTypes.STRING(32), allowNull: true },
    app_id: { type: DataTypes.STRING(32), allowNull: true },
    scopes: { type: DataTypes.STRING(500), allowNull: false },
    channel_id: { type: DataTypes.STRING(64), allowNull: true },
    token_ciphertext: { type: DataTypes.TEXT, allowNull: true },
    // active | revoked (Slack said the app was uninstalled or its tokens revoked)
    status: { type: DataTypes.STRING(16), allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('slack_installations', ['organization_id'], { name: 'slack_installations_organization', unique: true });
  await queryInterface.addIndex('slack_installations', ['team_id'], { name: 'slack_installations_team' });
  // An install under way: the SHA-256 of its single-use `state`, whose organization and admin it binds.
  await queryInterface.createTable('slack_oauth_states', {
    state_hash: { type: DataTypes.STRING(64), primaryKey: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'organizations', key: 'id' }, onDelete: 'CASCADE' },
    started_by: { type: DataTypes.STRING(200), allowNull: false },
    expires_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addColumn('users', 'slack_user_id', { type: DataTypes.STRING(32), allowNull: true });
  await queryInterface.addIndex('users', ['organization_id', 'slack_user_id'], { name: 'users_slack_user', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('users', 'users_slack_user');
  await queryInterface.removeColumn('users', 'slack_user_id');
  await queryInterface.dropTable('slack_oauth_states');
  await queryInterface.dropTable('slack_installations');
  await queryInterface.dropTable('chat_messages');
}
