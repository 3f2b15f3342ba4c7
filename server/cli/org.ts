import { openAdministration } from '../app/administration';
import { loadConfig } from '../config/load';
import { AppError } from '../domain/shared/errors';
import { OPERATOR } from '../domain/shared/principal';
import { CliError } from './errors';

/**
 * `greenlight org create --name N [--admin-email E]`: the first organization of a hosted
 * installation, made on its database directly (whoever can run this on the database's machine
 * is its operator), and with `--admin-email` its first admin, who signs in to the dashboard
 * through the invitation link printed.
 */
export async function runOrgCreate(options: { config?: string; name: string; adminEmail?: string }, out: NodeJS.WritableStream): Promise<void> {
  const { config } = loadConfig({ file: options.config });
  const name = options.name.trim();
  if (name === '' || name.length > 200) throw new CliError('--name must be 1 to 200 characters', 2);
  const administration = await openAdministration(config);
  if (!administration) throw new CliError('organizations belong to the hosted edition: set edition: hosted (or GREENLIGHT_EDITION=hosted) first', 2);
  try {
    const { organization, api_key } = await administration.organizations.create(OPERATOR, { name });
    out.write(
      `created organization ${organization.id} (${organization.name})\n` +
        `its admin API key, shown this once — keep it in a secret store:\n\n  ${api_key.key}\n\n` +
        `use it as: Authorization: Bearer ${api_key.prefix}…\n`,
    );
    if (options.adminEmail === undefined) return;
    // The operator, acting inside the new organization for this one change.
    const operatorHere = { ...OPERATOR, scope: { organizationId: organization.id } };
    const email = options.adminEmail.trim();
    try {
      const admin = await administration.people.createUser(operatorHere, { email, name: email.split('@')[0], role: 'admin' });
      out.write(`\nadded ${admin.email} as its admin; they set a password and sign in at (shown once, works for 7 days):\n\n  ${admin.invitation_url}\n`);
    } catch (error) {
      if (error instanceof AppError) throw new CliError(`the organization was created, but not its admin: ${error.detail}`, 2);
      throw error;
    }
  } finally {
    await administration.close();
  }
}
