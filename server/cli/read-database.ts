import fs from 'node:fs';
import { sqliteFile } from '../config/load';
import type { Config } from '../config/settings';
import { type Database, openDatabase } from '../db/connection';
import { pendingMigrations } from '../db/migrate';
import { CliError } from './errors';

/** Explains a failure to open or read the database in words, not an SQLite code. */
export function describeDatabaseError(error: unknown): string {
  const original = (error as { original?: { code?: string; message?: string } }).original ?? (error as { code?: string; message?: string });
  switch (original.code) {
    case 'SQLITE_NOTADB':
      return 'the file is not a Greenlight (SQLite) database';
    case 'SQLITE_CANTOPEN':
      return 'the file cannot be opened (missing, a directory, or no permission)';
    case 'SQLITE_CORRUPT':
      return 'the database file is damaged';
    case 'SQLITE_BUSY':
      return 'the database is locked by another process';
    default:
      return original.message ?? String(error);
  }
}

/**
 * Opens the configured database for inspection only, checking that it exists and that every
 * migration has been applied; the caller closes it.
 */
export async function openForReading(config: Config): Promise<Database> {
  const file = sqliteFile(config);
  if (file !== null && !fs.existsSync(file)) {
    throw new CliError(`no database at ${file}; start the server once (greenlight start) to create it`, 1);
  }
  const db = await openDatabase(config.database_url, { readOnly: true });
  try {
    const pending = await pendingMigrations(db.sequelize);
    if (pending.length > 0) {
      throw new CliError(`the database at ${db.location} is not migrated (${pending.join(', ')} pending); run greenlight start to migrate it`, 1);
    }
    return db;
  } catch (error) {
    await db.close();
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read the database at ${db.location}: ${describeDatabaseError(error)}`, 1);
  }
}
