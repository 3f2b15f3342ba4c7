import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort, runCli, type RunningCli, startCli, stopProgram } from '../support/cli';
import { describeReviewTools } from '../support/mcp';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

const ANSWER_WITHIN_SECONDS_IN_TESTS = 1;

const INSPECTOR = path.resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');

/** The environment of a user's shell, without the GREENLIGHT_* settings of whoever runs the tests. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([key, value]) => value !== undefined && !key.startsWith('GREENLIGHT_'))) as Record<string, string>;
}

describe('greenlight mcp next to a running API', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let api: RunningCli;
  let client: Client;
  let stderr = '';

  beforeAll(async () => {
    temp = makeTempDir('greenlight-mcp-');
    api = await startCli(['--api-only', '--port', String(await freePort())], { cwd: temp.dir });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--api-url', api.url, '--answer-within', String(ANSWER_WITHIN_SECONDS_IN_TESTS)],
      cwd: temp.dir,
      env: cleanEnv(),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'greenlight-tests', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await stopProgram(api);
    temp?.remove();
  });

  describeReviewTools('stdio', () => ({ client, apiUrl: api.url, answerWithinSeconds: ANSWER_WITHIN_SECONDS_IN_TESTS }));

  it('says on stderr which API it uses, and starts none of its own', () => {
    expect(stderr).toContain(`using the Greenlight API at ${api.url}`);
    expect(stderr).not.toContain('started one');
    expect(fs.existsSync(path.join(temp.dir, 'greenlight-data', 'greenlight.db'))).toBe(true);
  });

  it('answers the MCP Inspector CLI as an independent client', async () => {
    const target = [process.execPath, CLI, 'mcp', '--api-url', api.url];
    const listed = await runInspector([...target, '--method', 'tools/list'], temp.dir);
    expect(JSON.parse(listed).tools.map((tool: { name: string }) => tool.name)).toContain('request_review');

    const called = await runInspector(
      [...target, '--method', 'tools/call', '--tool-name', 'request_review', '--tool-arg', 'task_type=inspection', '--tool-arg', 'proposed_action=Close ticket 7', '--tool-arg', 'blocking=false'],
      temp.dir,
    );
    const result = JSON.parse(called);
    expect(result.content[0].text).toMatch(/^pending\n/);
    const stored = await call(api.url, 'GET', `/reviews/${result.structuredContent.review_id}`);
    expect(stored.body).toMatchObject({ task_type: 'inspection', proposed_action: 'Close ticket 7', status: 'pending' });
  });
});

function runInspector(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], { cwd, env: cleanEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`inspector exited ${code}: ${stderr}`))));
  });
}

/** Reads newline-delimited JSON-RPC from a child's stdout, keeping every line for inspection. */
function jsonRpcReader(stream: NodeJS.ReadableStream) {
  const lines: string[] = [];
  const waiting = new Map<number, (message: any) => void>();
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      lines.push(line);
      try {
        const message = JSON.parse(line);
        waiting.get(message.id)?.(message);
      } catch {
        // Kept in `lines`; the test fails on it.
      }
    }
  });
  return {
    lines,
    response: (id: number) => new Promise<any>((resolve) => waiting.set(id, resolve)),
  };
}

describe('greenlight mcp with no API running', () => {
  it('starts the API in-process on the configured database, says so on stderr, and writes only protocol to stdout', async () => {
    const temp = makeTempDir('greenlight-mcp-alone-');
    try {
      const port = await freePort();
      fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), `api_port: ${port}\ndata_dir: ./reviews-data\n`);
      const child = spawn(process.execPath, [CLI, 'mcp'], { cwd: temp.dir, env: cleanEnv() });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const rpc = jsonRpcReader(child.stdout);
      const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

      send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      expect((await rpc.response(1)).result.serverInfo.name).toBe('greenlight');
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/call', params: { name: 'request_review', arguments: { task_type: 'refund', proposed_action: 'Refund order 9', blocking: false } } });
      const created = (await rpc.response(2)).result.structuredContent;

      expect(stderr).toContain(`no Greenlight API was running, so this process started one on http://127.0.0.1:${port}`);
      expect(stderr).toContain(path.join(temp.dir, 'reviews-data', 'greenlight.db'));
      // The in-process API serves the dashboard and other agents like any other.
      const stored = await call(`http://127.0.0.1:${port}`, 'GET', `/reviews/${created.review_id}`);
      expect(stored.body).toMatchObject({ proposed_action: 'Refund order 9', status: 'pending' });

      child.stdin.end();
      expect(await exited).toBe(0);
      for (const line of rpc.lines) expect(JSON.parse(line).jsonrpc, line).toBe('2.0');
      expect(rpc.lines).toHaveLength(2);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();

      // What it stored is where `greenlight logs` looks.
      const logs = await runCli(['logs'], { cwd: temp.dir });
      expect(logs.stdout).toContain('Refund order 9');
    } finally {
      temp.remove();
    }
  });

  it('refuses to stand in for an API named with --api-url on this machine that does not answer', async () => {
    const temp = makeTempDir('greenlight-mcp-named-');
    try {
      const port = await freePort();
      const result = await runCli(['mcp', '--api-url', `http://127.0.0.1:${port}`], { cwd: temp.dir, timeoutMs: 20_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`no Greenlight API answers at http://127.0.0.1:${port} (--api-url / api_url)`);
      expect(result.stdout).toBe('');
      expect(fs.existsSync(path.join(temp.dir, 'greenlight-data'))).toBe(false);
    } finally {
      temp.remove();
    }
  });

  it('refuses to stand in for an API on another machine', async () => {
    const temp = makeTempDir('greenlight-mcp-remote-');
    try {
      const result = await runCli(['mcp', '--api-url', 'http://192.0.2.1:8000'], { cwd: temp.dir, timeoutMs: 20_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('no Greenlight API answers at http://192.0.2.1:8000 (--api-url / api_url)');
      expect(result.stdout).toBe('');
    } finally {
      temp.remove();
    }
  });
});
