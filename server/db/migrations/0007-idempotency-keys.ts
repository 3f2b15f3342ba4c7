import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * `Idempotency-Key` on POST /reviews: the key a client sent, scoped to who sent it (a digest
 * of the API key, never the key itself; empty without authentication), the digest of the
 * body it came with, and the review it created — written in the same transaction as the
 * review, so a stored review and its key cannot exist without each other.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('idempotency_keys', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: true },
    scope: { type: DataTypes.STRING(64), allowNull: false },
    key: { type: DataTypes.STRING(255), allowNull: false },
    request_hash: { type: DataTypes.STRING(64), allowNull: false },
    review_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'reviews', key: 'id' }, onDelete: 'CASCADE' },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('idempotency_keys', ['scope', 'key'], { name: 'idempotency_keys_scope_key', unique: true });
  // Expired keys are swept oldest first.
  await queryInterface.addIndex('idempotency_keys', ['created_at'], { name: 'idempotency_keys_created_at' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('idempotency_keys');
}
