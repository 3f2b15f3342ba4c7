import { randomBytes } from 'node:crypto';
import { DEFAULT_TEST_DATABASE_URL, dropRunDatabases } from './postgres';

/**
 * Names this run, for the databases its PostgreSQL tests create (the workers inherit the
 * variable), and drops whatever of them is left at the end. Registered by the `postgres`
 * project only.
 */
export default function setup(): () => Promise<void> {
  const prefix = `gl_test_${randomBytes(4).toString('hex')}`;
  process.env.GREENLIGHT_TEST_RUN = prefix;
  return () => dropRunDatabases(prefix, process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL);
}
