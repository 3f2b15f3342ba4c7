import { loadConfig } from '../config/load';
import { publicUrlOf } from '../config/settings';
import { openDatabase } from '../db/connection';
import { migrate } from '../db/migrate';
import { AgentStore } from '../db/agent-store';
import { AuditStore } from '../db/audit-store';
import { OrganizationStore } from '../db/organization-store';
import { PeopleStore } from '../db/people-store';
import { Outbox } from '../db/outbox';
import { DatabaseUnitOfWork } from '../db/unit-of-work';
import { EventFeed } from '../domain/events';
import { actingAs } from '../domain/audit';
import { AppError } from '../domain/errors';
import { OrganizationService } from '../domain/organizations';
import { PeopleService } from '../domain/people';
import { OPERATOR } from '../domain/ports';
import { Invitations } from '../domain/sign-in';
import { CliError } from './errors';

/**
 * `greenlight org create --name N [--admin-email E]`: the first organization of a hosted
 * installation, made on its database directly (whoever can run this on the database's machine
 * is its operator), and with `--admin-email` its first admin, who signs in to the dashboard
 * through the invitation link printed.
 */
export async function runOrgCreate(options: { config?: string; name: string; adminEmail?: string }, out: NodeJS.WritableStream): Promise<void> {
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
    const unitOfWork = new DatabaseUnitOfWork(db, new Outbox(db, Date.now), new EventFeed(), { auditLog: new AuditStore(db) });
    const organizations = new OrganizationService({ organizations: new OrganizationStore(db), agents: new AgentStore(db), unitOfWork, clock: Date.now });
    const { organization, api_key } = await actingAs(OPERATOR, () => organizations.create(OPERATOR, { name }));
    out.write(
      `created organization ${organization.id} (${organization.name})\n` +
        `its admin API key, shown this once — keep it in a secret store:\n\n  ${api_key.key}\n\n` +
        `use it as: Authorization: Bearer ${api_key.prefix}…\n`,
    );
    if (options.adminEmail === undefined) return;
    const people = new PeopleStore(db);
    const invitations = new Invitations(people, publicUrlOf(config), Date.now);
    // The operator, acting inside the new organization for this one change.
    const operatorHere = { ...OPERATOR, scope: { organizationId: organization.id } };
    const email = options.adminEmail.trim();
    try {
      const admin = await actingAs(operatorHere, () =>
        new PeopleService(people, people, invitations, unitOfWork, Date.now).createUser(operatorHere, { email, name: email.split('@')[0], role: 'admin' }),
      );
      out.write(`\nadded ${admin.email} as its admin; they set a password and sign in at (shown once, works for 7 days):\n\n  ${admin.invitation_url}\n`);
    } catch (error) {
      if (error instanceof AppError) throw new CliError(`the organization was created, but not its admin: ${error.detail}`, 2);
      throw error;
    }
  } finally {
    await db.close();
  }
}
