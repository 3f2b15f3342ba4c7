import { defineConfig } from 'vitest/config';

/** The PostgreSQL the `postgres` project runs against; each test server gets a database of its own there. */
const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The files run again on PostgreSQL: those whose behaviour rests on the database — what is
 * stored and read back, locks and races between writers, the outbox, claims and several API
 * processes on one database. The rest run on SQLite only, because PostgreSQL changes nothing they
 * prove: the OpenAPI document and its lint, headers, Host and Origin rules, body and connection
 * limits, the dashboard's proxy, the installation key (held in memory), who may call which
 * operation (decided before any store is asked), the CLI's own commands and the Claude Code
 * hook (clients of the API), the review policy's reload, this machine's connections, disk and
 * SQLite's own syncs, MCP (a client of the same use cases), the dashboard in a browser, and the
 * unit tiers.
 */
const ON_POSTGRES = [
  'test/http/agent-evidence.test.ts',
  'test/http/attachment-recovery.test.ts',
  'test/http/attachments.test.ts',
  'test/http/audit-log.test.ts',
  'test/http/blocking.test.ts',
  'test/http/combined-writes.test.ts',
  'test/http/auto-decide.test.ts',
  'test/http/evals.test.ts',
  'test/http/event-relay.test.ts',
  'test/http/events.test.ts',
  'test/http/feedback-and-statistics.test.ts',
  'test/http/hosted.test.ts',
  'test/http/idempotency.test.ts',
  'test/http/organization-cache.test.ts',
  'test/http/people.test.ts',
  'test/http/policy.test.ts',
  'test/http/receipts.test.ts',
  'test/http/review-with-attachments.test.ts',
  'test/http/outbox-retention.test.ts',
  'test/http/review-links.test.ts',
  'test/http/reviews.test.ts',
  'test/http/routing-rules.test.ts',
  'test/http/statistics-concurrency.test.ts',
  'test/http/shutdown.test.ts',
  'test/http/sign-in.test.ts',
  'test/http/slack-install.test.ts',
  'test/http/slack-interactions.test.ts',
  'test/http/slack-messages.test.ts',
  'test/http/slack-rule-channels.test.ts',
  'test/http/slack-socket-mode.test.ts',
  'test/http/tenancy.test.ts',
  'test/http/waiting-until.test.ts',
  'test/http/webhooks.test.ts',
  'test/http/workflows.test.ts',
  'test/cli/durability.test.ts',
  'test/cli/hosted.test.ts',
  'test/cli/out-of-files.test.ts',
  'test/cli/receipt-keys.test.ts',
  'test/cli/scale-out.test.ts',
  'test/cli/slack-scale-out.test.ts',
  'test/cli/status-and-logs.test.ts',
  'test/cli/webhook-flood.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
    // Most tests wait on a server, a child process or a browser rather than compute: three files
    // at a time keep two cores busy (Vitest's default on two cores is one at a time).
    maxWorkers: 3,
    // Memory assertions measure what is retained, after a collection, not garbage awaiting one.
    execArgv: ['--expose-gc'],
    // A limit catches a test that hangs, not one that is slow: a browser test that takes three
    // pages through a workflow, or one that starts several processes, took 30 to 45 s on a
    // two-core machine whose cores ran at half the speed of others', with the suite's other two
    // files running beside it (test/browser/diffs.test.mts timed out at 30 s there).
    testTimeout: 90_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // Pages and servers answer within a second or two on a loaded two-core machine.
    expect: { poll: { timeout: 8_000, interval: 25 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          // A worker runs its files one after another in one module graph: each file would
          // otherwise load the server's modules afresh (a third of the suite's CPU went to
          // imports). Files keep no state in modules of theirs that another reads: servers,
          // databases and directories are each test's own. The chaos tier keeps isolation (the
          // fuzzer listens to the process's uncaught errors).
          isolate: false,
          include: ['test/**/*.test.ts', 'test/**/*.test.mts', 'renderer/src/**/*.test.ts'],
          exclude: ['test/chaos/**', 'test/bench/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          isolate: false,
          include: ON_POSTGRES,
          env: { TEST_DATABASE_URL: postgresUrl },
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      {
        // `npm run test:chaos`, which CI runs after `npm test`: kill -9 rounds, fuzzing, bursts
        // and the quick benchmark take minutes and prove what no change to one feature breaks.
        extends: true,
        test: { name: 'chaos', include: ['test/chaos/**/*.test.ts', 'test/bench/**/*.test.ts'] },
      },
    ],
  },
});
