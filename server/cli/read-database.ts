import type { Config } from '../config/settings';
import { DatabaseUnreadable, type Inspection, openInspection } from '../app/inspection';
import { CliError } from './errors';

/**
 * The configured database for inspection only, through the same use cases as the API; a
 * database that is missing, unreadable or not migrated is an error that says so (exit 1).
 */
export async function openForReading(config: Config): Promise<Inspection> {
  try {
    return await openInspection(config);
  } catch (error) {
    if (error instanceof DatabaseUnreadable) throw new CliError(error.message, 1);
    throw error;
  }
}
