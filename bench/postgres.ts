import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The PostgreSQL server the bench measures against (trust authentication, as on every
 * developer and CI machine); each section gets a database of its own on it, dropped after.
 */
export const BENCH_POSTGRES_URL = process.env.GREENLIGHT_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Why PostgreSQL cannot be measured here, or null when it can. */
export async function postgresUnavailable(): Promise<string | null> {
  try {
    await onServer((client) => client.query('SELECT 1'));
    return null;
  } catch (error) {
    return `no PostgreSQL at ${new URL(BENCH_POSTGRES_URL).host} (${(error as Error).message})`;
  }
}

/** Runs `work` with the URL of a new, empty database, and drops the database afterwards. */
export async function withBenchDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const name = `greenlight_bench_${randomBytes(4).toString('hex')}`;
  await onServer((client) => client.query(`CREATE DATABASE ${name}`));
  try {
    const url = new URL(BENCH_POSTGRES_URL);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await onServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}
