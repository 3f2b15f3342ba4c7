import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export interface BenchProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Distinct loopback ports that were free a moment ago: each held until all are chosen, so no two are the same. */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', resolve);
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** The environment without GREENLIGHT_* settings: a key or database URL of the user's must not change what is measured. */
function withoutGreenlightSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('GREENLIGHT_')));
}

async function waitUntilAnswering(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode} before answering`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer within 60 s`);
}

/**
 * Servers the bench started and has not stopped: should it end early (an error, or a `kill`;
 * Ctrl-C reaches them itself), they go with it. Left running, servers still holding 10,000
 * connections each took a fifth of a core from every later measurement.
 */
const running = new Set<ChildProcess>();
const stopAll = (): void => {
  for (const child of running) child.kill('SIGKILL');
};
process.once('exit', stopAll);
// A crash (an unhandled error or rejection) ends the process without its 'exit' event.
process.once('uncaughtExceptionMonitor', stopAll);
process.once('SIGTERM', () => process.exit(143));

function tracked(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

export interface GreenlightOptions {
  /** The reviewer dashboard too. */
  dashboard?: boolean;
  /** A PostgreSQL URL instead of the SQLite file inside the data directory. */
  databaseUrl?: string;
  /** API processes (`--workers`, PostgreSQL only). */
  workers?: number;
  /** Settings of the measurement's own (`GREENLIGHT_…`). */
  settings?: NodeJS.ProcessEnv;
  /** Another checkout, built, to run instead of this one (`alternate.ts` compares two). */
  root?: string;
}

/**
 * The receipt keys' key-encryption secret of this run's processes: those sharing one PostgreSQL
 * database from data directories of their own must share it, as a deployment's do.
 */
const RECEIPT_KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64');

/**
 * `greenlight start` from the built package, as a user runs it, in production mode on an
 * SQLite file inside `dataDir` (or on `databaseUrl`).
 */
export async function startGreenlight(dataDir: string, options: GreenlightOptions = {}): Promise<BenchProcess & { dashboardUrl?: string }> {
  const [apiPort, dashboardPort] = await freePorts(2);
  const args = [path.join(options.root ?? ROOT, 'bin', 'greenlight.js'), 'start', '--port', String(apiPort), '--dashboard-port', String(dashboardPort)];
  if (!options.dashboard) args.push('--api-only');
  if (options.workers) args.push('--workers', String(options.workers));
  const database = options.databaseUrl ? { GREENLIGHT_DATABASE_URL: options.databaseUrl } : {};
  const child = tracked(spawn(process.execPath, args, {
    // No greenlight.yaml there: defaults and the environment below only.
    cwd: dataDir,
    env: {
      ...withoutGreenlightSettings(process.env),
      NODE_ENV: 'production',
      GREENLIGHT_DATA_DIR: dataDir,
      GREENLIGHT_BLOCKING_TIMEOUT_SECONDS: '3600',
      GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY: RECEIPT_KEY_ENCRYPTION_KEY,
      ...database,
      ...options.settings,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  }));
  const url = `http://127.0.0.1:${apiPort}`;
  await waitUntilAnswering(`${url}/health`, child);
  const dashboardUrl = options.dashboard ? `http://127.0.0.1:${dashboardPort}` : undefined;
  if (dashboardUrl) await waitUntilAnswering(dashboardUrl, child);
  return { url, dashboardUrl, pid: child.pid as number, stop: stopper(child) };
}

export type Baseline = 'baseline-server' | 'baseline-postgres-server';

/**
 * The practical limit for this stack: `bench/baseline-server.ts` on the given SQLite file, or
 * `bench/baseline-postgres-server.ts` on the given PostgreSQL database.
 */
export async function startBaseline(database: string, baseline: Baseline = 'baseline-server'): Promise<BenchProcess> {
  const [port] = await freePorts(1);
  const child = tracked(
    spawn(process.execPath, [path.join(__dirname, `${baseline}.js`), database, String(port)], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(`${url}/health`, child);
  return { url, pid: child.pid as number, stop: stopper(child) };
}

/** Resident memory of a process, in bytes (Linux). */
export function residentBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return kb ? Number(kb[1]) * 1024 : Number.NaN;
}

/** CPU time a process has used so far (user + system), in seconds (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces; the fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const userTicks = Number(fields[11]);
  const systemTicks = Number(fields[12]);
  return (userTicks + systemTicks) / CLOCK_TICKS_PER_SECOND;
}
