import type { QueryInterface } from 'sequelize';

/** The breakdowns of GET /stats group by these columns; an index turns each into an index scan. */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addIndex('reviews', ['urgency'], { name: 'reviews_urgency' });
  await queryInterface.addIndex('reviews', ['framework'], { name: 'reviews_framework' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('reviews', 'reviews_framework');
  await queryInterface.removeIndex('reviews', 'reviews_urgency');
}
