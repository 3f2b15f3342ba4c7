import type { QueryInterface } from 'sequelize';

/**
 * Each endpoint's next delivery, found by one index seek: the dispatcher takes at most one per
 * endpoint at a time, so it looks up the head of each endpoint's queue rather than scanning every
 * due delivery (a backlog one organization can grow without bound) on each look.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addIndex('webhook_deliveries', ['webhook_id', 'status', 'next_attempt_at', 'id'], { name: 'webhook_deliveries_queue' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('webhook_deliveries', 'webhook_deliveries_queue');
}
