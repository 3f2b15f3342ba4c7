import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The audit log of the hosted edition: append-only, each entry chained to the one before it in
 * its organization by `prev_hash`. Triggers refuse every UPDATE and DELETE, so no path through
 * the application (or a mistaken query) can edit the record; the chain shows any change made
 * around them.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('audit_log', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    organization_id: { type: DataTypes.INTEGER, allowNull: false },
    actor_type: { type: DataTypes.STRING(16), allowNull: false },
    actor_id: { type: DataTypes.STRING(64), allowNull: true },
    action: { type: DataTypes.STRING(64), allowNull: false },
    target_type: { type: DataTypes.STRING(32), allowNull: false },
    target_id: { type: DataTypes.INTEGER, allowNull: true },
    // JSON object.
    data: { type: DataTypes.TEXT, allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    prev_hash: { type: DataTypes.STRING(64), allowNull: false },
    hash: { type: DataTypes.STRING(64), allowNull: false },
  });
  // One successor per entry: a chain, never a fork.
  await queryInterface.addIndex('audit_log', ['organization_id', 'prev_hash'], { name: 'audit_log_chain', unique: true });
  await queryInterface.addIndex('audit_log', ['organization_id', 'id'], { name: 'audit_log_organization' });
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  if (queryInterface.sequelize.getDialect() === 'postgres') {
    await run(`CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'audit log entries cannot be changed or deleted'; END $$`);
    await run('CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()');
  } else {
    for (const change of ['UPDATE', 'DELETE'] as const) await run(sqliteGuard(change));
  }
}

/** SQLite's trigger that refuses `change` to an entry (the migration that numbers the entries lifts and restores it). */
export function sqliteGuard(change: 'UPDATE' | 'DELETE'): string {
  return `CREATE TRIGGER audit_log_no_${change.toLowerCase()} BEFORE ${change} ON audit_log
          BEGIN SELECT RAISE(ABORT, 'audit log entries cannot be changed or deleted'); END`;
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('audit_log');
  if (queryInterface.sequelize.getDialect() === 'postgres') await queryInterface.sequelize.query('DROP FUNCTION audit_log_append_only()');
}
