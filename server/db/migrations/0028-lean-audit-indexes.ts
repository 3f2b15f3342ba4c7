import type { QueryInterface } from 'sequelize';

/**
 * Two of the audit log's four indexes go; every append wrote to each.
 *
 * - `audit_log_chain`, unique on `(organization_id, prev_hash)`, kept a chain from forking. Since
 *   0017 an entry's place is unique in its organization (`audit_log_sequence`) and is the head's
 *   next one, taken with the head locked; and a fork made around the application shows, because
 *   verifying walks the places in order and checks each link. Its keys are hashes, so each append
 *   wrote to a random page of it.
 * - `audit_log_organization`, on `(organization_id, id)`, served the newest-first listing. An
 *   organization's entries take ids in the order of their places (both are given with the head
 *   locked), so the listing now pages by place, on `audit_log_sequence`.
 */
export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('audit_log', 'audit_log_chain');
  await queryInterface.removeIndex('audit_log', 'audit_log_organization');
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addIndex('audit_log', ['organization_id', 'prev_hash'], { name: 'audit_log_chain', unique: true });
  await queryInterface.addIndex('audit_log', ['organization_id', 'id'], { name: 'audit_log_organization' });
}
