import fs from 'node:fs';
import { sqliteFile } from '../config/load';
import { type Config, reviewLinkBaseOf } from '../config/settings';
import { type Database, openDatabase } from '../db/connection';
import { pendingMigrations } from '../db/migrate';
import { defineModels } from '../db/models';
import { ReviewStore } from '../db/review-store';
import { StatisticsQuery } from '../db/statistics-query';
import { ReadReviews } from '../domain/reviews/reading';
import { StatisticsService } from '../domain/reviews/statistics';

/** Why the database cannot be inspected, in words a person can act on. */
export class DatabaseUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnreadable';
  }
}

/**
 * The use cases `greenlight status` and `greenlight logs` read through, on the configured
 * database opened read-only: they change nothing, not even SQLite's journal mode.
 */
export interface Inspection {
  /** Where the data is (a PostgreSQL URL without its password). */
  location: string;
  reviews: ReadReviews;
  statistics: StatisticsService;
  close(): Promise<void>;
}

/** Explains a failure to open or read the database in words, not an SQLite code. */
function describeDatabaseError(error: unknown): string {
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
 * Opens the configured database for inspection, checking that it exists and that every
 * migration has been applied (a `DatabaseUnreadable` says why not); the caller closes it.
 */
export async function openInspection(config: Config): Promise<Inspection> {
  const file = sqliteFile(config);
  if (file !== null && !fs.existsSync(file)) {
    throw new DatabaseUnreadable(`no database at ${file}; start the server once (greenlight start) to create it`);
  }
  const db = await openDatabase(config.database_url, { readOnly: true });
  try {
    await checkMigrated(db);
  } catch (error) {
    await db.close();
    if (error instanceof DatabaseUnreadable) throw error;
    throw new DatabaseUnreadable(`cannot read the database at ${db.location}: ${describeDatabaseError(error)}`);
  }
  return {
    location: db.location,
    reviews: new ReadReviews({ reviews: new ReviewStore(db, defineModels(db.sequelize), reviewLinkBaseOf(config)) }),
    statistics: new StatisticsService(new StatisticsQuery(db.sequelize)),
    close: () => db.close(),
  };
}

async function checkMigrated(db: Database): Promise<void> {
  const pending = await pendingMigrations(db.sequelize);
  if (pending.length > 0) {
    throw new DatabaseUnreadable(`the database at ${db.location} is not migrated (${pending.join(', ')} pending); run greenlight start to migrate it`);
  }
}
