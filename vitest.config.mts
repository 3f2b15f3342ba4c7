import { defineConfig } from 'vitest/config';

/** The PostgreSQL the `postgres` project runs against; each test server gets a database of its own there. */
const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export default defineConfig({
  test: {
    pool: 'forks',
    // Memory assertions measure what is retained, after a collection, not garbage awaiting one.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // Pages and servers answer within a second or two on a loaded two-core machine.
    expect: { poll: { timeout: 8_000, interval: 25 } },
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/**/*.test.ts', 'test/**/*.test.mts', 'renderer/src/**/*.test.ts'] },
      },
      {
        // The HTTP and CLI tiers again, on PostgreSQL. Left out: tests of this machine's
        // connections, disk and SQLite's own syncs, which the database does not change.
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/http/**/*.test.ts', 'test/cli/**/*.test.ts'],
          exclude: ['test/cli/connections.test.ts', 'test/cli/disk-full.test.ts', 'test/cli/attachment-durability.test.ts'],
          env: { TEST_DATABASE_URL: postgresUrl },
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
