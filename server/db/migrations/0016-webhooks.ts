import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Webhooks (hosted edition): an organization's endpoints, and a delivery row per event and
 * endpoint, written in the transaction of the change it announces: a delivery is never lost
 * when the process dies, and is retried on its schedule until it succeeds or the endpoint is
 * disabled.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('webhooks', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // Null: an endpoint of the self-hosted installation, from the `webhooks` setting.
    organization_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'organizations', key: 'id' } },
    url: { type: DataTypes.STRING(2048), allowNull: false },
    // JSON list of event types.
    events: { type: DataTypes.TEXT, allowNull: false },
    description: { type: DataTypes.STRING(500), allowNull: true },
    // The signing secret, and during a rotation the one before it until `previous_secret_until`:
    // receivers need them in clear, so they are kept as given (an admin sees them only once).
    secret: { type: DataTypes.STRING(100), allowNull: false },
    previous_secret: { type: DataTypes.STRING(100), allowNull: true },
    previous_secret_until: { type: DataTypes.BIGINT, allowNull: true },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    disabled_reason: { type: DataTypes.STRING(500), allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('webhooks', ['organization_id'], { name: 'webhooks_organization' });
  await queryInterface.createTable('webhook_deliveries', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    webhook_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'webhooks', key: 'id' }, onDelete: 'CASCADE' },
    // The `webhook-id` header: the same on every attempt, so receivers can drop repeats.
    message_id: { type: DataTypes.STRING(64), allowNull: false },
    event_type: { type: DataTypes.STRING(64), allowNull: false },
    // The body as sent, JSON.
    payload: { type: DataTypes.TEXT, allowNull: false },
    // pending | delivered | failed (the schedule is spent, or the endpoint gone)
    status: { type: DataTypes.STRING(16), allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    next_attempt_at: { type: DataTypes.BIGINT, allowNull: true },
    // A process sending it holds it until then; another takes it over if that process died.
    claimed_until: { type: DataTypes.BIGINT, allowNull: true },
    last_attempt_at: { type: DataTypes.BIGINT, allowNull: true },
    last_status_code: { type: DataTypes.INTEGER, allowNull: true },
    last_error: { type: DataTypes.STRING(500), allowNull: true },
    duration_ms: { type: DataTypes.INTEGER, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('webhook_deliveries', ['status', 'next_attempt_at'], { name: 'webhook_deliveries_due' });
  await queryInterface.addIndex('webhook_deliveries', ['webhook_id', 'id'], { name: 'webhook_deliveries_endpoint' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('webhook_deliveries');
  await queryInterface.dropTable('webhooks');
}
