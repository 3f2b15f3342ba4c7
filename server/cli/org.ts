import { loadConfig } from '../config/load';
import { openDatabase } from '../db/connection';
import { migrate } from '../db/migrate';
import { AgentStore } from '../db/agent-store';
import { AuditStore } from '../db/audit-store';
import { OrganizationStore } from '../db/organization-store';
import { Outbox } from '../db/outbox';
import { DatabaseUnitOfWork } from '../db/unit-of-work';
import { EventFeed } from '../domain/events';
import { actingAs } from '../domain/audit';
import { OrganizationService } from '../domain/organizations';
import { OPERATOR } from '../domain/ports';
import { CliError } from './errors';

/**
 * `greenlight org create --name N`: the first organization of a hosted installation, made on
 * its database directly (whoever can run this on the database's machine is its operator).
 */
export async function runOrgCreate(options: { config?: string; name: string }, out: NodeJS.WritableStream): Promise<void> {
  const { config } = loadConfig({ file: options.config });
  if (config.edition !== 'hosted') {
    throw new CliError('organizations belong to the hosted edition: set edition: hosted (or GREENLIGHT_EDITION=hosted) first', 2);
  }
  const name = options.name.trim();
  if (name === '' || name.length > 200) throw new CliError('--name must be 1 to 200 characters', 2);
  const db = await openDatabase(config.database_url);
  try {
    await migrate(db.sequelize);
    // Nothing listens here: the API processes learn of nothing an organization's creation changes.
    const unitOfWork = new DatabaseUnitOfWork(db, new Outbox(db, Date.now), new EventFeed(), new AuditStore(db));
    const organizations = new OrganizationService({ organizations: new OrganizationStore(db), agents: new AgentStore(db), unitOfWork, clock: Date.now });
    const { organization, api_key } = await actingAs(OPERATOR, () => organizations.create(OPERATOR, { name }));
    out.write(
      `created organization ${organization.id} (${organization.name})\n` +
        `its admin API key, shown this once — keep it in a secret store:\n\n  ${api_key.key}\n\n` +
        `use it as: Authorization: Bearer ${api_key.prefix}…\n`,
    );
  } finally {
    await db.close();
  }
}
