import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/settings';
import { type Database, openDatabase } from '../db/connection';
import { DiskSpace } from '../system/disk-space';
import { migrate } from '../db/migrate';
import type { Outbox } from '../db/outbox';
import type { EventFeed } from '../domain/shared/events';
import type { Logger } from '../logging';
import { AttachmentFiles } from '../storage/attachment-files';

/** Where the server keeps what it keeps: the database, and attachment bytes under `data_dir`. */
export interface Storage {
  db: Database;
  /** Whether writes find room on the disk under data_dir. */
  diskSpace: DiskSpace;
  files: AttachmentFiles;
}

/** The configured database (SQLite in this process, or PostgreSQL shared with others), migrated. */
export async function openMigratedDatabase(config: Config, log: Logger, diskSpace?: DiskSpace): Promise<Database> {
  const db = await openDatabase(config.database_url, { diskSpace, poolSize: config.database_pool_size });
  try {
    const applied = await migrate(db.sequelize);
    if (applied.length > 0) log.info('database migrated', { database: db.location, applied });
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

export async function openStorage(config: Config, log: Logger, clock: () => number): Promise<Storage> {
  // Attachments and the pid file live here, whichever database holds the rows.
  fs.mkdirSync(config.data_dir, { recursive: true });
  const diskSpace = new DiskSpace(config.data_dir, clock);
  const db = await openMigratedDatabase(config, log, diskSpace);
  return { db, diskSpace, files: new AttachmentFiles(path.join(config.data_dir, 'attachments'), diskSpace) };
}

/**
 * Events other API processes commit reach this process's feed, and `recheck` runs after the
 * connection that brings them comes back. Only PostgreSQL is shared: one process owns SQLite.
 */
export async function relayOtherProcesses(
  db: Database,
  options: { url: string; outbox: Outbox; feed: EventFeed; recheck: () => Promise<void>; log: Logger },
): Promise<{ stop(): Promise<void> } | undefined> {
  if (!db.sql.sharedByProcesses) return undefined;
  // Loaded only for PostgreSQL, with its driver.
  const { PostgresEventRelay } = await import('../db/postgres-relay.js');
  const relay = new PostgresEventRelay(options);
  await relay.start();
  return relay;
}
