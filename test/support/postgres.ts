import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../server/db/connection';
import { migrate } from '../../server/db/migrate';

/**
 * Set for the PostgreSQL run of the HTTP and CLI tiers (vitest's `postgres` project): the
 * server each test starts gets a database of its own on that server, created for it and
 * dropped after it, so runs and tests cannot see each other's data.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** Where the `postgres` project of vitest.config.mts finds PostgreSQL unless TEST_DATABASE_URL says otherwise. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Names of this run's databases start with it (set by test/support/global-setup.ts), so teardown finds them all. */
export function runPrefix(): string {
  return process.env.GREENLIGHT_TEST_RUN ?? 'gl_test_adhoc';
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>, adminUrl = TEST_DATABASE_URL): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function urlOf(database: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${database}`;
  return url.toString();
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** The run's migrated database that each test's is copied from (made by test/support/global-setup.ts). */
export function templateDatabaseName(prefix: string): string {
  return `${prefix}_template`;
}

/**
 * Makes `name` a database with every migration applied, once per run: a copy of it is about a
 * tenth of the time a server takes to migrate a new database.
 */
export async function createTemplateDatabase(prefix: string, adminUrl: string): Promise<void> {
  const name = templateDatabaseName(prefix);
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`), adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase(url.toString());
  try {
    await migrate(db.sequelize);
  } finally {
    // A database with a connection open cannot be copied.
    await db.close();
  }
}

/**
 * A database of its own for one test server: a copy of the run's migrated template when the
 * run made one (GREENLIGHT_TEST_TEMPLATE), else an empty one the server migrates. A test of the
 * migrations themselves asks for an `empty` one.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const name = `${runPrefix()}_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? undefined : process.env.GREENLIGHT_TEST_TEMPLATE;
  await withAdmin((client) => client.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`));
  return { url: urlOf(name), drop: () => withAdmin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))) };
}

/** Drops every database of this run that a test left behind (a failed test skips its own cleanup). */
export async function dropRunDatabases(prefix: string, adminUrl: string): Promise<void> {
  await withAdmin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${prefix}\\_%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  }, adminUrl);
}
