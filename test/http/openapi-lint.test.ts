import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runNode } from '../support/cli';
import { startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Ends the linter at its first attempt to reach the network (see the file). */
const NO_NETWORK = path.join(__dirname, '..', 'support', 'no-network.cjs');

/** The linter of the devDependencies, found as Node finds the package. */
function redoclyCli(): string {
  const manifestFile = require.resolve('@redocly/cli/package.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { bin: Record<string, string> };
  return path.join(path.dirname(manifestFile), manifest.bin.redocly);
}

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: Array<{ pointer: string }>;
}

/** Every problem of `redocly lint --format json`, one readable line each. */
function problemsOf(result: CliResult): string[] {
  let report: { problems: LintProblem[] };
  try {
    report = JSON.parse(result.stdout) as { problems: LintProblem[] };
  } catch {
    throw new Error(`redocly lint exited with ${result.code} and no report; stderr: ${result.stderr}`);
  }
  return report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
}

let server: TestServer;
let workDir: { dir: string; remove: () => void };

beforeAll(async () => {
  server = await startTestServer();
  workDir = makeTempDir('greenlight-openapi-lint-');
});
afterAll(async () => {
  await server.dispose();
  workDir.remove();
});

describe('the served OpenAPI document', () => {
  it("passes Redocly's recommended rules with no error and no warning, offline", async () => {
    fs.writeFileSync(path.join(workDir.dir, 'openapi.json'), await (await fetch(`${server.url}/openapi.json`)).text());
    // Run where no redocly.yaml can be picked up: the recommended rules exactly.
    const result = await runNode(
      ['--require', NO_NETWORK, redoclyCli(), 'lint', '--extends', 'recommended', '--format', 'json', 'openapi.json'],
      {
        cwd: workDir.dir,
        // Its telemetry is on unless turned off (it would phone home at the end of every run).
        env: { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
        timeoutMs: 60_000,
      },
    );
    expect(problemsOf(result)).toEqual([]);
    expect(result.code, result.stderr).toBe(0);
  });
});
