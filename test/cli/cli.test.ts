import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, freePort, freePorts, runCli, startCli, stopProgram } from '../support/cli';
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
    const [port, dashboardPort] = await freePorts(2);
    const server = await startCli(['--port', String(port), '--dashboard-port', String(dashboardPort)], {
      cwd: temp.dir,
      ready: /dashboard listening on/,
    });
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    expect(server.dashboardUrl).toBe(`http://127.0.0.1:${dashboardPort}`);
    expect(server.output()).not.toMatch(/"level":"warn"/);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const page = await fetch(`${server.dashboardUrl}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<div id="app">');
    const proxied = await fetch(`${server.dashboardUrl}/api/health`);
    expect(await proxied.json()).toMatchObject({ status: 'healthy' });
    // Its data directory is where the configuration says: the pid file is there while it runs.
    await expect.poll(() => fs.existsSync(path.join(temp.dir, 'greenlight-data', 'greenlight.pid'))).toBe(true);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/"stopped"/);
  });

  it('runs only the dashboard with --dashboard-only, saying so when the API is not there', async () => {
    const [apiPort, dashboardPort] = await freePorts(2);
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
      await expect.poll(() => fs.existsSync(path.join(temp.dir, 'elsewhere', 'greenlight.pid'))).toBe(true);
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

  it('names the flag that was typed when its value is out of range', async () => {
    const result = await runCli(['start', '--port', '99999'], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('greenlight: configuration error: api_port must be an integer from 1 to 65535 (got "99999" from --port)\n');
  });

  it('refuses to listen on the network with authentication off, and says how to go on', async () => {
    const result = await runCli(['start', '--api-only', '--host', '0.0.0.0', '--port', String(await freePort())], { cwd: temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^greenlight: configuration error: api_host is 0\.0\.0\.0, which other machines can reach, and enable_auth is false: .*--allow-unauthenticated-network\)\n$/);
  });

  it('listens on the network without a key when told so with --allow-unauthenticated-network, and warns who can do what', async () => {
    const [port, dashboardPort] = await freePorts(2);
    const server = await startCli(['--host', '0.0.0.0', '--port', String(port), '--dashboard-port', String(dashboardPort), '--allow-unauthenticated-network'], {
      cwd: temp.dir,
      env: { GREENLIGHT_DASHBOARD_HOST: '0.0.0.0' },
      ready: /dashboard listening on/,
    });
    try {
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const warnings = server
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":"warn"'))
        .map((line) => (JSON.parse(line) as { message: string }).message);
      expect(warnings).toEqual([
        `the API on http://0.0.0.0:${port} asks for no API key and is open to the network (allow_unauthenticated_network): ` +
          `anyone who can reach this machine on port ${port} can read, file and decide reviews, read their attachments and open MCP sessions`,
        `the dashboard on http://0.0.0.0:${dashboardPort} asks for no API key and is open to the network (allow_unauthenticated_network): ` +
          `anyone who can reach this machine on port ${dashboardPort} can read and decide every review through it`,
      ]);
    } finally {
      await stopProgram(server);
    }
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

/**
 * `greenlight start` on a terminal: util-linux `script` gives it a pseudo-terminal, as a shell
 * would; Ctrl+C through that terminal stops it. `redirect` is appended to the command line.
 */
function startOnTerminal(args: string[], redirect = ''): { output: () => string; ready: Promise<void>; stop: () => Promise<number | null> } {
  // `exec` so that Ctrl+C reaches Greenlight alone: a shell left waiting in between (dash, the
  // /bin/sh `script` falls back to without $SHELL) would die of the SIGINT itself, with 130.
  const command = 'exec ' + [process.execPath, CLI, 'start', ...args].map((part) => `'${part}'`).join(' ') + redirect;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: temp.dir, env: { ...process.env, TERM: 'dumb', SHELL: '/bin/sh' } });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString().replace(/\r/g, '');
      if (output.includes('Stop it with Ctrl+C.')) resolve();
    });
    void exited.then(() => reject(new Error(`greenlight start ended before it was ready: ${output}`)));
  });
  return {
    output: () => output,
    ready,
    stop: async () => {
      child.stdin.write('\x03');
      return exited;
    },
  };
}

describe('greenlight start on a terminal', () => {
  it('prints where the dashboard and the API are, readably, after its log lines', async () => {
    const [port, dashboardPort] = await freePorts(2);
    const running = startOnTerminal(['--port', String(port), '--dashboard-port', String(dashboardPort)]);
    await running.ready;
    expect(running.output()).toContain(`  Reviewer dashboard  http://127.0.0.1:${dashboardPort}   ← open this to review\n`);
    expect(running.output()).toContain(`  API for agents      http://127.0.0.1:${port}   (reference: http://127.0.0.1:${port}/docs)\n`);
    expect(running.output()).not.toMatch(/^\{/m);
    expect(await running.stop()).toBe(0);
    expect(running.output()).toMatch(/stopped/);
  });

  it('with its output going to a file, prints the addresses on the terminal and keeps the file to JSON lines', async () => {
    const port = await freePort();
    const running = startOnTerminal(['--api-only', '--port', String(port)], ' > log.jsonl');
    await running.ready;
    expect(running.output()).toMatch(new RegExp(`\\n  API for agents +http://127\\.0\\.0\\.1:${port} `));
    expect(await running.stop()).toBe(0);
    const lines = fs.readFileSync(path.join(temp.dir, 'log.jsonl'), 'utf8').trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((line) => JSON.parse(line).message)).toContain(`Greenlight API listening on http://127.0.0.1:${port}`);
  });
});
