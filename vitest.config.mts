import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'renderer/src/**/*.test.ts'],
    pool: 'forks',
    // Memory assertions measure what is retained, after a collection, not garbage awaiting one.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // Pages and servers answer within a second or two on a loaded two-core machine.
    expect: { poll: { timeout: 8_000, interval: 25 } },
  },
});
