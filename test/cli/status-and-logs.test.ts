import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, cliEnv, freePort, runCli, startCli } from '../support/cli';
import { createTestDatabase, TEST_DATABASE_URL } from '../support/postgres';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
let port: number;
beforeEach(async () => {
  temp = makeTempDir('greenlight-status-');
  port = await freePort();
  fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), `api_port: ${port}\n`);
});
afterEach(() => temp.remove());

async function post(url: string, body: object): Promise<{ id: number }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as { id: number };
}

describe('greenlight status', () => {
  it('reports every check healthy and exits 0 while the server runs', async () => {
    const server = await startCli(['--api-only'], { cwd: temp.dir });
    try {
      await post(`${server.url}/reviews`, { task_type: 'refund', proposed_action: 'refund it' });
      const result = await runCli(['status'], { cwd: temp.dir });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/config\s+ok\s+.*greenlight\.yaml/);
      expect(result.stdout).toMatch(/database\s+ok\s+\S+ \(reachable, schema up to date\)/);
      expect(result.stdout).toMatch(/reviews\s+ok\s+1 pending, 0 decided/);
      expect(result.stdout).toMatch(new RegExp(`api\\s+ok\\s+http://127\\.0\\.0\\.1:${port} \\(version`));
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('exits non-zero, saying why, when the API is down', async () => {
    const server = await startCli(['--api-only'], { cwd: temp.dir });
    server.child.kill('SIGTERM');
    await server.exited;
    const result = await runCli(['status'], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/database\s+ok/);
    expect(result.stdout).toMatch(new RegExp(`api\\s+FAIL\\s+http://127\\.0\\.0\\.1:${port} is not reachable \\(nothing is listening\\)`));
    expect(result.stderr).toBe('greenlight: unhealthy: api\n');
  });

  it.skipIf(TEST_DATABASE_URL)(`exits non-zero, saying why, when the database file is unreadable${TEST_DATABASE_URL ? ' (SQLite only: skipped on PostgreSQL)' : ''}`, async () => {
    fs.mkdirSync(path.join(temp.dir, 'greenlight-data'));
    fs.writeFileSync(path.join(temp.dir, 'greenlight-data', 'greenlight.db'), 'this is not a database, just text '.repeat(200));
    const result = await runCli(['status'], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/database\s+FAIL\s+cannot read the database at .*greenlight\.db: the file is not a Greenlight \(SQLite\) database/);
    expect(result.stderr).toMatch(/unhealthy: database, api/);
  });

  it.runIf(TEST_DATABASE_URL)('exits non-zero, saying why, when PostgreSQL does not answer', async () => {
    const result = await runCli(['status'], { cwd: temp.dir, env: { GREENLIGHT_DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere` } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/database\s+FAIL\s+cannot read the database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/nowhere: .*ECONNREFUSED/);
  });

  it('exits non-zero when there is no database yet, and creates none', async () => {
    // On PostgreSQL, a database nobody has migrated: the run's test databases are migrated copies.
    const env = TEST_DATABASE_URL ? { GREENLIGHT_DATABASE_URL: (await createTestDatabase({ empty: true })).url } : {};
    const result = await runCli(['status'], { cwd: temp.dir, env });
    expect(result.code).toBe(1);
    if (TEST_DATABASE_URL) {
      expect(result.stdout).toMatch(/database\s+FAIL\s+the database at postgres:.* is not migrated \(0001-reviews-and-decisions, .*\); run greenlight start to migrate it/);
    } else {
      expect(result.stdout).toMatch(/database\s+FAIL\s+no database at .*; start the server once/);
      expect(fs.existsSync(path.join(temp.dir, 'greenlight-data', 'greenlight.db'))).toBe(false);
    }
  });

  it('exits with 2 on an invalid configuration', async () => {
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), 'enable_auth: true\n');
    const result = await runCli(['status'], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/enable_auth is true but api_key is empty/);
  });
});

describe('greenlight logs', () => {
  it('prints recent reviews as an aligned table, newest first, filtered by status', async () => {
    const server = await startCli(['--api-only'], { cwd: temp.dir });
    try {
      const first = await post(`${server.url}/reviews`, { task_type: 'refund', proposed_action: 'Refund order 1042 in full', urgency: 'high' });
      await post(`${server.url}/reviews/${first.id}/decide`, { decision_type: 'reject', reviewer_name: 'dana', notes: 'fraud risk' });
      await post(`${server.url}/reviews`, { task_type: 'email_send', proposed_action: `Send the newsletter ${'to everyone '.repeat(10)}` });

      const all = await runCli(['logs'], { cwd: temp.dir });
      expect(all.code).toBe(0);
      const lines = all.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+AGE\s+TASK TYPE\s+URGENCY\s+STATUS\s+ACTION\s+DECISION$/);
      expect(lines[1]).toMatch(/^2\s+\d+s\s+email_send\s+medium\s+pending\s+Send the newsletter to everyone.*…\s+-$/);
      expect(lines[2]).toMatch(/^1\s+\d+s\s+refund\s+high\s+rejected\s+Refund order 1042 in full\s+reject by dana: fraud risk$/);
      const statusColumn = lines[0].indexOf('STATUS');
      expect(lines[1].indexOf('pending')).toBe(statusColumn);
      expect(lines[2].indexOf('rejected')).toBe(statusColumn);

      const rejected = await runCli(['logs', '--status-filter', 'rejected'], { cwd: temp.dir });
      expect(rejected.stdout.trimEnd().split('\n')).toHaveLength(2);

      const limited = await runCli(['logs', '--limit', '1'], { cwd: temp.dir });
      expect(limited.stdout).toMatch(/\(1 of 2; --limit shows more\)/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('writes control, bidi and format characters out, so an action cannot drive the terminal or reorder a line', async () => {
    const server = await startCli(['--api-only'], { cwd: temp.dir });
    try {
      const review = await post(`${server.url}/reviews`, { task_type: 'clean\u001B[31mup', proposed_action: 'ok\u001B[2K\u001B[1A\u202Erm\u202C' });
      await post(`${server.url}/reviews/${review.id}/decide`, { decision_type: 'modify', modified_action: 'x\r\u0007', reviewer_name: 'd\u009B' });

      const { stdout } = await runCli(['logs'], { cwd: temp.dir });
      expect(stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E]/);
      const line = stdout.trimEnd().split('\n')[1];
      expect(line).toContain('clean\\u{1B}[31mup');
      expect(line).toContain('ok\\u{1B}[2K\\u{1B}[1A\\u{202E}rm\\u{202C}');
      expect(line).toMatch(/modify by d\\u\{9B\}: x\\u\{D\}\\u\{7\}$/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('refuses an unknown status and a bad limit', async () => {
    expect((await runCli(['logs', '--status-filter', 'done'], { cwd: temp.dir })).code).not.toBe(0);
    expect((await runCli(['logs', '--limit', '0'], { cwd: temp.dir })).code).not.toBe(0);
  });
});

describe('output to a reader that stops early', () => {
  it('ends quietly, as `greenlight status | head -1` expects', async () => {
    const child = spawn(process.execPath, [CLI, 'status'], { cwd: temp.dir, env: await cliEnv(temp.dir) });
    // The reading end is gone before the command writes a line.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
  });
});
