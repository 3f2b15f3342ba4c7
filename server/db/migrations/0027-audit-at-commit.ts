import type { QueryInterface } from 'sequelize';

/**
 * On PostgreSQL an audit entry is linked into its organization's chain at COMMIT. Linking locks
 * the organization's head until the transaction ends; taken in the transaction's last statement,
 * the lock was still held through the round trip back to a busy Node process and its COMMIT, and
 * every create of one organization queued behind it (a hosted organization's creates ran at a
 * third of self-hosted ones, most of their backends waiting for that lock). Now the transaction
 * only inserts its entries into `audit_pending`, and a deferred trigger links each into the
 * chain — head locked, moved on, entry written to `audit_log` with the hash `entryHash` gives —
 * then removes it from `audit_pending`, all inside the COMMIT: the head is held only while the
 * commit is written. An entry still commits with its change, or neither does.
 *
 * `audit_pending` is empty outside a committing transaction, so it is UNLOGGED: its rows cost
 * no WAL, and a crash (which empties such a table) loses nothing of a committed transaction.
 * `hashed` is the entry's canonical JSON as `hashedText` writes it: what the hash covers beside
 * the previous entry's hash.
 *
 * SQLite has one writer at a time: its entries are linked when they are written, as before.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  await run(`CREATE UNLOGGED TABLE audit_pending (
               id bigserial PRIMARY KEY,
               organization_id integer NOT NULL,
               actor_type varchar(16) NOT NULL,
               actor_id varchar(64),
               actor_label varchar(200),
               action varchar(64) NOT NULL,
               target_type varchar(32) NOT NULL,
               target_id integer,
               data text NOT NULL,
               created_at bigint NOT NULL,
               hashed text NOT NULL
             )`);
  await run(LINK_AT_COMMIT);
  await run(LINK_AT_COMMIT_TRIGGER);
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  await queryInterface.sequelize.query('DROP TABLE audit_pending');
  await queryInterface.sequelize.query('DROP FUNCTION audit_link()');
}

/** The deferred trigger that links each entry as its transaction commits (0029 links after the commit instead, and restores this on the way down). */
export const LINK_AT_COMMIT = `CREATE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql AS $$
             DECLARE
               previous audit_heads%ROWTYPE;
               linked varchar(64);
             BEGIN
               SELECT * INTO previous FROM audit_heads WHERE organization_id = NEW.organization_id FOR UPDATE;
               IF NOT FOUND THEN
                 -- The organization's first entry; should two make its head at once, the second waits, then takes its turn.
                 INSERT INTO audit_heads (organization_id, sequence, hash) VALUES (NEW.organization_id, 0, repeat('0', 64)) ON CONFLICT (organization_id) DO NOTHING;
                 SELECT * INTO previous FROM audit_heads WHERE organization_id = NEW.organization_id FOR UPDATE;
               END IF;
               linked := encode(sha256(convert_to(previous.hash || NEW.hashed, 'UTF8')), 'hex');
               UPDATE audit_heads SET sequence = previous.sequence + 1, hash = linked WHERE organization_id = NEW.organization_id;
               INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, sequence, prev_hash, hash)
                 VALUES (NEW.organization_id, NEW.actor_type, NEW.actor_id, NEW.actor_label, NEW.action, NEW.target_type, NEW.target_id, NEW.data, NEW.created_at,
                         previous.sequence + 1, previous.hash, linked);
               DELETE FROM audit_pending WHERE id = NEW.id;
               RETURN NULL;
             END $$`;

export const LINK_AT_COMMIT_TRIGGER =
  'CREATE CONSTRAINT TRIGGER audit_link AFTER INSERT ON audit_pending DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_link()';
