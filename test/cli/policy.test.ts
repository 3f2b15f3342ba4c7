import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, runCli, startCli, stopProgram } from '../support/cli';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-policy-');
});
afterEach(() => temp.remove());

const ASSIGN_REFUNDS = `routing:
  rules:
    - name: refunds-to-finance
      priority: 5
      conditions:
        task_type: { operator: "=", value: refund }
      assign_to: finance@example.com
`;

describe('the review policy from the command line', () => {
  it('is reloaded by greenlight reload (and SIGHUP); an invalid edit keeps the policy in force', async () => {
    const file = path.join(temp.dir, 'greenlight.yaml');
    expect((await runCli(['init'], { cwd: temp.dir })).code).toBe(0);
    const port = await freePort();
    const server = await startCli(['--api-only', '--port', String(port)], { cwd: temp.dir });
    try {
      expect(server.output()).toContain('routing is off');
      const before = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund 1' });
      expect(before.body.assigned_to).toBeNull();

      fs.writeFileSync(file, `api_port: ${port}\n${ASSIGN_REFUNDS}`);
      const reloaded = await runCli(['reload'], { cwd: temp.dir });
      expect(reloaded.code).toBe(0);
      expect(reloaded.stdout).toContain("rule 'refunds-to-finance' (priority 5): assign_to finance@example.com");
      await expect.poll(async () => (await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund 2' })).body.assigned_to).toBe('finance@example.com');

      // A broken edit: `reload` refuses to pass it on, and a hang-up sent anyway changes nothing.
      fs.writeFileSync(file, `api_port: ${port}\n${ASSIGN_REFUNDS.replace('"="', '"=~"')}`);
      const refused = await runCli(['reload'], { cwd: temp.dir });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("routing: rule 'refunds-to-finance', condition on task_type: unknown operator \"=~\"");
      server.child.kill('SIGHUP');
      await expect.poll(() => server.output()).toContain('policy not reloaded; the previous one stays in force');
      expect((await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund 3' })).body.assigned_to).toBe('finance@example.com');
    } finally {
      await stopProgram(server);
    }
    expect(fs.existsSync(path.join(temp.dir, 'greenlight-data', 'greenlight.pid'))).toBe(false);
    const orphan = await runCli(['reload'], { cwd: temp.dir, env: {} });
    expect(orphan.code).toBe(2); // the file is still the broken edit
  });

  it('says so when no server is running', async () => {
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), ASSIGN_REFUNDS);
    const result = await runCli(['reload'], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no running Greenlight API found for .*greenlight-data \(no greenlight\.pid\)/);
  });

  it('refuses to start on an invalid rule, with one line naming the rule and the problem', async () => {
    fs.writeFileSync(
      path.join(temp.dir, 'greenlight.yaml'),
      'routing:\n  rules:\n    - name: broken\n      priority: high\n      conditions: {}\n      assign_to: a@example.com\n',
    );
    const result = await runCli(['start', '--api-only', '--port', String(await freePort())], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      'greenlight: configuration error: routing: rule \'broken\': priority must be an integer (higher runs first), not "high" (in greenlight.yaml)',
    );
  });

  it('is shown by greenlight status', async () => {
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), `${ASSIGN_REFUNDS}  expiry: { critical: 15m }\n`);
    const result = await runCli(['status'], { cwd: temp.dir });
    expect(result.stdout).toMatch(
      / {2}policy {4}ok {4}rules, in the order they are tried \(higher priority first; the first that matches wins\):\n {18}1\. rule 'refunds-to-finance' \(priority 5\): assign_to finance@example.com\n {18}no default reviewers\n {18}expiry: critical 15 min; then reject/,
    );
  });
});
