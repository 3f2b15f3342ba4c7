import { DataTypes, type QueryInterface } from 'sequelize';
import { sqliteGuard } from './0011-audit-log';

/**
 * Anchors each organization's audit chain at both ends. The chain alone shows an entry changed,
 * removed or inserted before the newest one, but not its newest entries removed: what remains
 * is still a chain. So each entry gets its place in its organization's log (`sequence`, from 1,
 * without gaps), and `audit_heads` keeps, apart from the entries, the sequence and hash of the
 * newest one, moved in the transaction of every append. A log that ends before its head has
 * lost entries. Triggers let a head only move forward, and never be deleted.
 *
 * Existing entries are numbered in the order of their ids, and each organization's head is set
 * to its newest entry.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  const postgres = queryInterface.sequelize.getDialect() === 'postgres';
  await queryInterface.addColumn('audit_log', 'sequence', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });

  // Numbering the entries is the one change ever made to them: the guard steps aside for it.
  if (postgres) await run('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
  else await run('DROP TRIGGER audit_log_no_update');
  await run(`UPDATE audit_log SET sequence = numbered.sequence
             FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY id) AS sequence FROM audit_log) AS numbered
             WHERE audit_log.id = numbered.id`);
  if (postgres) await run('ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only');
  else await run(sqliteGuard('UPDATE'));
  await queryInterface.addIndex('audit_log', ['organization_id', 'sequence'], { name: 'audit_log_sequence', unique: true });

  await queryInterface.createTable('audit_heads', {
    organization_id: { type: DataTypes.INTEGER, primaryKey: true },
    sequence: { type: DataTypes.INTEGER, allowNull: false },
    hash: { type: DataTypes.STRING(64), allowNull: false },
  });
  await run(`INSERT INTO audit_heads (organization_id, sequence, hash)
             SELECT organization_id, sequence, hash FROM audit_log WHERE id IN (SELECT MAX(id) FROM audit_log GROUP BY organization_id)`);

  const refusal = 'an audit head only moves forward, and is never deleted';
  if (postgres) {
    await run(`CREATE FUNCTION audit_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN
                 IF TG_OP = 'DELETE' OR NEW.sequence < OLD.sequence OR NEW.organization_id <> OLD.organization_id THEN RAISE EXCEPTION '${refusal}'; END IF;
                 RETURN NEW;
               END $$`);
    await run('CREATE TRIGGER audit_heads_forward_only BEFORE UPDATE OR DELETE ON audit_heads FOR EACH ROW EXECUTE FUNCTION audit_heads_forward_only()');
  } else {
    await run(`CREATE TRIGGER audit_heads_no_rewind BEFORE UPDATE ON audit_heads
               WHEN NEW.sequence < OLD.sequence OR NEW.organization_id <> OLD.organization_id
               BEGIN SELECT RAISE(ABORT, '${refusal}'); END`);
    await run(`CREATE TRIGGER audit_heads_no_delete BEFORE DELETE ON audit_heads BEGIN SELECT RAISE(ABORT, '${refusal}'); END`);
  }
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('audit_heads');
  if (queryInterface.sequelize.getDialect() === 'postgres') await queryInterface.sequelize.query('DROP FUNCTION audit_heads_forward_only()');
  await queryInterface.removeIndex('audit_log', 'audit_log_sequence');
  // Not removeColumn: on SQLite it rebuilds the table, and the rebuilt one has lost its guard.
  await queryInterface.sequelize.query('ALTER TABLE audit_log DROP COLUMN sequence');
}
