import type { QueryInterface } from 'sequelize';
import { LINK_AT_COMMIT, LINK_AT_COMMIT_TRIGGER } from './0027-audit-at-commit';

/**
 * On PostgreSQL an organization's audit entries are chained after their transactions commit, a
 * batch at a time, instead of one by one inside each COMMIT (0027). Linked at COMMIT, every
 * entry took the organization's head and wrote a new version of that one row, and held it
 * through its commit's flush: an organization's changes committed one after another, and the
 * link cost a hosted create about a third of its database CPU (pgbench of a create's statements,
 * 16 clients: 1.25–1.42 ms per create against 0.81–1.05 without the link).
 *
 * A change's transaction still writes its entries, into `audit_pending`, and they commit with it
 * or not at all. The table is now logged: a committed entry waits there until it is linked and
 * must outlive a crash. `audit_link(organization)` chains what of one organization has committed,
 * in the order it was written, under the head's row lock, and moves the head once: each API
 * process runs it shortly after its changes commit, before it lists or verifies a log (so a
 * reader sees every committed entry chained), and in a sweep for entries a stopped process left.
 * A second linker of one organization waits for the head, then finds the entries the first took
 * gone. Entries are taken with `DELETE … RETURNING`, so an entry that commits while a batch is
 * linked is left for the next one, never removed unlinked. The primary key gives way to an index
 * on `(organization_id, id)`: the linker's only way in.
 *
 * SQLite has one writer at a time: its entries are linked when they are written, as before.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  await run('DROP TRIGGER audit_link ON audit_pending');
  await run('DROP FUNCTION audit_link()');
  await run('ALTER TABLE audit_pending SET LOGGED');
  await run('ALTER TABLE audit_pending DROP CONSTRAINT audit_pending_pkey');
  await run('CREATE INDEX audit_pending_organization ON audit_pending (organization_id, id)');
  await run(`CREATE FUNCTION audit_link(organization integer) RETURNS integer LANGUAGE plpgsql AS $$
             DECLARE
               head audit_heads%ROWTYPE;
               entry audit_pending%ROWTYPE;
               linked integer := 0;
               next_hash varchar(64);
             BEGIN
               -- Asked before every read of a log: with nothing waiting, it locks and writes nothing.
               PERFORM 1 FROM audit_pending WHERE organization_id = organization LIMIT 1;
               IF NOT FOUND THEN RETURN 0; END IF;
               SELECT * INTO head FROM audit_heads WHERE organization_id = organization FOR UPDATE;
               IF NOT FOUND THEN
                 -- The organization's first entries; should two linkers make its head at once, the second waits, then takes its turn.
                 INSERT INTO audit_heads (organization_id, sequence, hash) VALUES (organization, 0, repeat('0', 64)) ON CONFLICT (organization_id) DO NOTHING;
                 SELECT * INTO head FROM audit_heads WHERE organization_id = organization FOR UPDATE;
               END IF;
               FOR entry IN WITH taken AS (DELETE FROM audit_pending WHERE organization_id = organization RETURNING *) SELECT * FROM taken ORDER BY id LOOP
                 next_hash := encode(sha256(convert_to(head.hash || entry.hashed, 'UTF8')), 'hex');
                 INSERT INTO audit_log (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, data, created_at, sequence, prev_hash, hash)
                   VALUES (organization, entry.actor_type, entry.actor_id, entry.actor_label, entry.action, entry.target_type, entry.target_id, entry.data, entry.created_at,
                           head.sequence + 1, head.hash, next_hash);
                 head.sequence := head.sequence + 1;
                 head.hash := next_hash;
                 linked := linked + 1;
               END LOOP;
               IF linked > 0 THEN
                 UPDATE audit_heads SET sequence = head.sequence, hash = head.hash WHERE organization_id = organization;
               END IF;
               RETURN linked;
             END $$`);
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() !== 'postgres') return;
  const run = (sql: string) => queryInterface.sequelize.query(sql);
  // What waits is chained before linking goes back to COMMIT, which only links what commits from now on.
  await run('SELECT audit_link(organization_id) FROM (SELECT DISTINCT organization_id FROM audit_pending) AS waiting');
  await run('DROP FUNCTION audit_link(integer)');
  await run('DROP INDEX audit_pending_organization');
  await run('ALTER TABLE audit_pending ADD PRIMARY KEY (id)');
  await run('ALTER TABLE audit_pending SET UNLOGGED');
  await run(LINK_AT_COMMIT);
  await run(LINK_AT_COMMIT_TRIGGER);
}
