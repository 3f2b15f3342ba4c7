import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The agent's name on each review: a registered agent's name as it was when the review was
 * filed, or the `agent_name` an agent without one sent. Kept on the review, as the audit log
 * keeps an actor's label, so a review reads the same after its agent is renamed or removed.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('reviews', 'agent_name', { type: DataTypes.STRING(255), allowNull: true });
  // Reviews filed before this column by registered agents get their agent's current name.
  await queryInterface.sequelize.query(
    'UPDATE reviews SET agent_name = (SELECT agents.name FROM agents WHERE agents.id = reviews.agent_id AND agents.organization_id = reviews.organization_id) WHERE agent_id IS NOT NULL',
  );
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('reviews', 'agent_name');
}
