import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import { createTestDatabase, TEST_DATABASE_URL } from './postgres';
import { TEST_RECEIPT_KEY_ENCRYPTION_KEY } from './server';

export const CLI = path.resolve(__dirname, '..', '..', 'bin', 'greenlight.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `greenlight` command to completion, as a user would from a shell. */
export function runCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  return runNode([CLI, ...args], options);
}

/** Runs `node <args>` (options, the program, its arguments) with this test run's Node, to completion. */
export async function runNode(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  const env = await cliEnv(options.cwd, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} did not finish; stderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const databases = new Map<string, Promise<string>>();

/**
 * The environment of a command run in `cwd`: no GREENLIGHT_* setting but those given, and, in
 * the PostgreSQL run, the database of that directory (created on first use, dropped at the end
 * of the run), as `data_dir` is the directory's own on SQLite.
 */
export async function cliEnv(cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of Object.keys(env)) {
    if (key.startsWith('GREENLIGHT_') && !(key in extra)) delete env[key];
  }
  if (TEST_DATABASE_URL && !('GREENLIGHT_DATABASE_URL' in extra)) {
    if (!databases.has(cwd)) databases.set(cwd, createTestDatabase().then((database) => database.url));
    env.GREENLIGHT_DATABASE_URL = await databases.get(cwd);
  }
  return env;
}

export interface RunningCli {
  child: ChildProcess;
  /** The API's URL, or the dashboard's when only the dashboard runs. */
  url: string;
  dashboardUrl: string | undefined;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * Starts `greenlight start …` and resolves once it has printed `ready` (by default, the first
 * "listening on" line).
 */
export function startCli(args: string[], options: StartOptions): Promise<RunningCli> {
  return startProgram(CLI, ['start', ...args], options);
}

/** `greenlight start` with the API and the dashboard on free ports, ready once both listen. */
export async function startWithDashboard(cwd: string, env: NodeJS.ProcessEnv = {}): Promise<RunningCli> {
  const [apiPort, dashboardPort] = await freePorts(2);
  const args = ['--port', String(apiPort), '--dashboard-port', String(dashboardPort)];
  return startCli(args, { cwd, env, ready: /dashboard listening on/ });
}

/** Stops a program started by `startProgram` and waits until it has exited. */
/**
 * `greenlight start --api-only` on the PostgreSQL database at `databaseUrl` (unless `env` names
 * another), in a directory of its own under `parent` (its own pid file and data_dir), as one of
 * several processes of a deployment: with the receipt keys' key-encryption secret they share.
 */
export async function startApiProcess(parent: string, name: string, databaseUrl: string, { args = [], env = {} }: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<RunningCli> {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  return startCli(['--api-only', '--port', String(await freePort()), ...args], {
    cwd: dir,
    env: { GREENLIGHT_DATABASE_URL: databaseUrl, GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY: TEST_RECEIPT_KEY_ENCRYPTION_KEY, ...env },
  });
}

export async function stopProgram(running: RunningCli | undefined): Promise<void> {
  running?.child.kill('SIGTERM');
  await running?.exited;
}

export interface StartOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  ready?: RegExp;
  /** A command the program runs under (strace, unshare, a shell setting a ulimit), given Node's command line as its last arguments. */
  via?: string[];
}

/** Starts a Node program of the package (the CLI, the desktop entry) and waits for it to listen. */
export async function startProgram(entry: string, args: string[], options: StartOptions): Promise<RunningCli> {
  const ready = options.ready ?? /listening on/;
  const env = await cliEnv(options.cwd, options.env);
  const [command, ...commandArgs] = [...(options.via ?? []), process.execPath, entry, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd: options.cwd, env });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(entry)} ${args.join(' ')} did not come up; output: ${output}`));
    }, 30_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!ready.test(output)) return;
      const api = /API listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
      const dashboardUrl = /dashboard listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
      clearTimeout(timer);
      resolve({ child, url: (api ?? dashboardUrl)!, dashboardUrl, output: () => output, exited });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(entry)} exited with ${code}; output: ${output}`));
    });
  });
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}

/**
 * Distinct TCP ports that were free a moment ago, for programs a test starts and must know the
 * port of. A program binds its port a second or more after the port was chosen, and in that
 * time anything else on the machine may take it: CI failed once with "port … is already in use".
 * So the ports come from below the kernel's ephemeral range, where no outgoing connection and no
 * `listen(0)` (the suite makes thousands of each) is ever given one, and from a slice of that
 * range for each of Vitest's concurrent workers, so that two workers never pick the same one.
 * Each port is held until all are chosen, and one a program of this worker still holds is skipped.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    for (let tries = 0; held.length < count; tries += 1) {
      if (tries === PORT_SLICE.size) throw new Error(`no free port in ${PORT_SLICE.first}–${PORT_SLICE.first + PORT_SLICE.size - 1}`);
      const port = PORT_SLICE.first + (portCursor++ % PORT_SLICE.size);
      const server = await listening(port);
      if (server) held.push(server);
    }
    return held.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

const PORT_SLICE = portSlice();
let portCursor = 0;

function portSlice(): { first: number; size: number } {
  const lowest = 20_000;
  const slices = 16;
  const ephemeralFirst = Number(readFileOr('/proc/sys/net/ipv4/ip_local_port_range', '32768').trim().split(/\s+/)[0]);
  const size = Math.floor((ephemeralFirst - lowest) / slices);
  if (!(size >= 100)) throw new Error(`the kernel's ephemeral ports start at ${ephemeralFirst}, leaving no room below for test ports above ${lowest}`);
  const worker = Number(process.env.VITEST_POOL_ID ?? process.pid) % slices;
  return { first: lowest + worker * size, size };
}

function readFileOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function listening(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
