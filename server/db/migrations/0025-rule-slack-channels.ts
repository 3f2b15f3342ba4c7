import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A hosted routing rule's own Slack channel: the reviews it routes are posted there rather than
 * to the organization's installed channel, as a self-hosted rule's `slack_channel_id` does.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('routing_rules', 'slack_channel_id', { type: DataTypes.STRING(64), allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('routing_rules', 'slack_channel_id');
}
