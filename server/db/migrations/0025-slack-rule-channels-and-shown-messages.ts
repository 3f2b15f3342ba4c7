import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A hosted routing rule's own Slack channel: the reviews it routes are posted there rather than
 * to the organization's installed channel, as a self-hosted rule's `slack_channel_id` does. And
 * what each chat message shows (the SHA-256 of the message last sent), so a change that would
 * rewrite it the same (an agent's wait moving within the minute shown) calls the chat for nothing.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('routing_rules', 'slack_channel_id', { type: DataTypes.STRING(64), allowNull: true });
  await queryInterface.addColumn('chat_messages', 'shown_sha256', { type: DataTypes.STRING(64), allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('chat_messages', 'shown_sha256');
  await queryInterface.removeColumn('routing_rules', 'slack_channel_id');
}
