import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, runCli, startCli } from '../support/cli';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-cli-');
});
afterEach(() => temp.remove());

describe('greenlight --help', () => {
  it.each([[[]], [['init']], [['start']]])('explains %j', async (args) => {
    const result = await runCli([...args, '--help'], { cwd: temp.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Usage: greenlight/);
  });
});

describe('greenlight init', () => {
  it('writes the commented configuration and refuses to overwrite it without --force', async () => {
    const first = await runCli(['init'], { cwd: temp.dir });
    expect(first.code).toBe(0);
    const file = path.join(temp.dir, 'greenlight.yaml');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/# TCP port of the HTTP API\..*\napi_port: 8000/);

    fs.appendFileSync(file, '# my edit\n');
    const second = await runCli(['init'], { cwd: temp.dir });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/already exists; use --force/);
    expect(fs.readFileSync(file, 'utf8')).toContain('# my edit');

    const forced = await runCli(['init', '--force'], { cwd: temp.dir });
    expect(forced.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('# my edit');
  });

  it('writes to --path', async () => {
    const result = await runCli(['init', '--path', 'conf/gl.yaml'], { cwd: temp.dir });
    expect(result.code).toBe(0);
    expect(fs.existsSync(path.join(temp.dir, 'conf', 'gl.yaml'))).toBe(true);
  });
});

describe('greenlight start', () => {
  it('serves the API and the dashboard, the dashboard forwarding /api, and stops on SIGTERM', async () => {
    const [port, dashboardPort] = [await freePort(), await freePort()];
    const server = await startCli(['--port', String(port), '--dashboard-port', String(dashboardPort)], {
      cwd: temp.dir,
      ready: /dashboard listening on/,
    });
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    expect(server.dashboardUrl).toBe(`http://127.0.0.1:${dashboardPort}`);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const page = await fetch(`${server.dashboardUrl}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<div id="app">');
    const proxied = await fetch(`${server.dashboardUrl}/api/health`);
    expect(await proxied.json()).toMatchObject({ status: 'healthy' });
    expect(fs.existsSync(path.join(temp.dir, 'greenlight-data', 'greenlight.db'))).toBe(true);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/"stopped"/);
  });

  it('runs only the dashboard with --dashboard-only, saying so when the API is not there', async () => {
    const [apiPort, dashboardPort] = [await freePort(), await freePort()];
    const server = await startCli(['--dashboard-only', '--port', String(apiPort), '--dashboard-port', String(dashboardPort)], { cwd: temp.dir });
    try {
      expect(server.output()).not.toMatch(/API listening/);
      const proxied = await fetch(`${server.url}/api/reviews`);
      expect(proxied.status).toBe(502);
      expect(((await proxied.json()) as { detail: string }).detail).toBe(`the Greenlight API at http://127.0.0.1:${apiPort} is not reachable; is it running?`);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('takes its settings from the config file and the environment', async () => {
    const port = await freePort();
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), `api_port: 1\ndata_dir: ./elsewhere\n`);
    const server = await startCli(['--api-only'], { cwd: temp.dir, env: { GREENLIGHT_API_PORT: String(port) } });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
      expect(server.output()).not.toMatch(/dashboard/);
      expect(fs.existsSync(path.join(temp.dir, 'elsewhere', 'greenlight.db'))).toBe(true);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('stops with exit code 2 and one line naming the key when the config is invalid', async () => {
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), 'api_port: lots\n');
    const result = await runCli(['start'], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'greenlight: configuration error: api_port must be an integer from 1 to 65535 (got "lots" from greenlight.yaml)\n',
    );
  });

  it('stops with exit code 2 on a bad environment value', async () => {
    const result = await runCli(['start'], { cwd: temp.dir, env: { GREENLIGHT_BLOCKING_TIMEOUT_SECONDS: 'soon' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^greenlight: configuration error: blocking_timeout_seconds .* GREENLIGHT_BLOCKING_TIMEOUT_SECONDS\)\n$/);
  });

  it('says which port is taken instead of crashing', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const result = await runCli(['start', '--port', String(port)], { cwd: temp.dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use; choose another with --port / --dashboard-port or api_port / dashboard_port`));
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      blocker.close();
    }
  });
});
