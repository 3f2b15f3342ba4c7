import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Signing in (hosted edition): a person's password, the invitation link that lets them set it,
 * and their sessions, kept in the database so that a restart or another API process knows them.
 * Only digests are stored: a copy of the database opens no account and no session. And the
 * audit log names who acted in words, now that people act.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // scrypt$N$r$p$salt$key; null until the person has followed an invitation link.
  await queryInterface.addColumn('users', 'password_hash', { type: DataTypes.STRING(200), allowNull: true });
  // SHA-256 of the one live invitation link's token; a new link replaces it, setting a password clears it.
  await queryInterface.addColumn('users', 'invitation_hash', { type: DataTypes.STRING(64), allowNull: true });
  await queryInterface.addColumn('users', 'invitation_expires_at', { type: DataTypes.BIGINT, allowNull: true });
  await queryInterface.addIndex('users', ['invitation_hash'], { name: 'users_invitation', unique: true });
  await queryInterface.createTable('sessions', {
    // SHA-256 of the cookie's token.
    token_hash: { type: DataTypes.STRING(64), primaryKey: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' } },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    expires_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await queryInterface.addIndex('sessions', ['user_id'], { name: 'sessions_user' });
  // Who acted, in words (a person's or a key's name then): a log read years later names them.
  await queryInterface.addColumn('audit_log', 'actor_label', { type: DataTypes.STRING(200), allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('audit_log', 'actor_label');
  await queryInterface.dropTable('sessions');
  await queryInterface.removeIndex('users', 'users_invitation');
  await queryInterface.removeColumn('users', 'invitation_expires_at');
  await queryInterface.removeColumn('users', 'invitation_hash');
  await queryInterface.removeColumn('users', 'password_hash');
}
