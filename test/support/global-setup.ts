import { randomBytes } from 'node:crypto';
import { createTemplateDatabase, DEFAULT_TEST_DATABASE_URL, dropRunDatabases, templateDatabaseName } from './postgres';

/**
 * Names this run, for the databases its PostgreSQL tests create (the workers inherit the
 * variables), migrates the template each of them is copied from, and drops whatever of them is
 * left at the end. Registered by the `postgres` project only.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const prefix = `gl_test_${randomBytes(4).toString('hex')}`;
  const adminUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  process.env.GREENLIGHT_TEST_RUN = prefix;
  await createTemplateDatabase(prefix, adminUrl);
  process.env.GREENLIGHT_TEST_TEMPLATE = templateDatabaseName(prefix);
  return () => dropRunDatabases(prefix, adminUrl);
}
