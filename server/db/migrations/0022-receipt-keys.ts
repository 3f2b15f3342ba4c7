import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Decision receipts: the Ed25519 keys that sign them, and each decision's receipt as it was
 * signed when the decision was made, so every answer about a decision gives the same receipt.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('receipt_keys', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // The JWK thumbprint (RFC 7638) of the public key: the `kid` of the receipts it signs.
    kid: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    // The public key as a JWK, JSON: listed at /.well-known/jwks.json for as long as the row lives.
    public_jwk: { type: DataTypes.TEXT, allowNull: false },
    // The private key (PKCS#8), AES-256-GCM under the key-encryption key, which is never in the database.
    private_key: { type: DataTypes.TEXT, allowNull: false },
    // 1 on the key that signs now, NULL on earlier ones: the unique index lets one row be current,
    // so two processes starting at once on one PostgreSQL database cannot both make a first key.
    current_slot: { type: DataTypes.INTEGER, allowNull: true, unique: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    retired_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  // Null for decisions made before receipts existed.
  await queryInterface.addColumn('decisions', 'receipt', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('decisions', 'receipt');
  await queryInterface.dropTable('receipt_keys');
}
