import type { Database, OpenOptions } from './database';
import { openSqlite } from './sqlite';

export type { Database } from './database';

/** Opens `databaseUrl` as loaded from the configuration: `sqlite:<file>` or `postgres://…`. */
export async function openDatabase(databaseUrl: string, options: OpenOptions = {}): Promise<Database> {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(databaseUrl.slice('sqlite:'.length), options);
  // Loaded only for PostgreSQL: the embedded edition does not pay for its driver's memory.
  const { openPostgres } = await import('./postgres.js');
  return openPostgres(databaseUrl, options);
}
