import cluster from 'node:cluster';
import fs from 'node:fs';
import { loadConfig, sqliteFile } from '../config/load';
import { type Config, type ConfigKey, apiUrlOf } from '../config/settings';
import { DashboardNotBuiltError } from '../dashboard/app';
import { createLogger, type Logger } from '../logging';
import { startServer } from '../app/api-server';
import { startDashboard } from '../app/dashboard-server';
import { PortInUseError } from '../app/listen';
import { describePolicy } from '../domain/routing/review-policy';
import { startWorkers } from './api-workers';
import { CliError } from './errors';
import { pidFileOf, reloadPolicyOnHangup } from './policy-reload';
import { boundHeapGrowth, releaseYoungGeneration } from './heap';
import { readyBanner, showToPerson } from './ready-banner';
import { runUntilStopped, type Stoppable, stopRequested } from './run-until-stopped';

export interface StartOptions {
  config?: string;
  port?: string;
  host?: string;
  dashboardPort?: string;
  apiOnly?: boolean;
  dashboardOnly?: boolean;
  allowUnauthenticatedNetwork?: boolean;
  /** API processes to run (node:cluster); more than one needs PostgreSQL. */
  workers?: number;
}

interface Started extends Stoppable {
  url: string;
}

/**
 * Says where `greenlight reload` finds the process to signal (SIGHUP), until closed: the API's,
 * or the primary's, which passes the signal on to its workers.
 */
function writePidFile(config: Config): () => void {
  const pidFile = pidFileOf(config);
  fs.writeFileSync(pidFile, `${process.pid}\n`);
  return () => fs.rmSync(pidFile, { force: true });
}

async function startApi(config: Config, readConfig: () => Config, log: Logger, options: { pidFile: boolean }): Promise<Started> {
  boundHeapGrowth();
  log.info('review policy', { policy: describePolicy(config.routing) });
  const server = await startServer(config, { log });
  log.info(`Greenlight API listening on ${server.url}`, { database: server.databaseLocation });
  const removePidFile = options.pidFile ? writePidFile(config) : () => {};
  const stopReloading = reloadPolicyOnHangup(server, readConfig, log);
  return {
    url: server.url,
    close: async () => {
      stopReloading();
      await server.close();
      removePidFile();
    },
  };
}

/** The API in `count` worker processes, this one overseeing them. */
async function startApiWorkers(count: number, config: Config, log: Logger): Promise<Started> {
  const workers = await startWorkers(count, log);
  log.info(`Greenlight API listening on ${workers.url} in ${count} worker processes`);
  const removePidFile = writePidFile(config);
  const forwardHangup = (): void => workers.signal('SIGHUP');
  process.on('SIGHUP', forwardHangup);
  return {
    url: workers.url,
    close: async () => {
      process.off('SIGHUP', forwardHangup);
      await workers.close();
      removePidFile();
    },
  };
}

/**
 * A worker of `--workers`: the API alone, until the primary stops it (SIGTERM) or goes away. A
 * Ctrl+C reaches every process of the terminal, and a service manager may send SIGTERM to every
 * process of the service as well as the primary does: the worker ignores SIGINT and a repeated
 * SIGTERM, and always finishes its shutdown.
 */
async function runApiWorker(config: Config, readConfig: () => Config, log: Logger): Promise<void> {
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  const stop = stopRequested((stopNow) => process.once('disconnect', () => stopNow('the primary process went away')), WORKER_SIGNALS);
  let api: Started;
  try {
    api = await startApi(config, readConfig, log, { pidFile: false });
  } catch (error) {
    explain(error);
  }
  releaseYoungGeneration();
  await runUntilStopped([api], log, stop, []);
  // The channel to the primary would keep this process alive; closing it lets it end.
  cluster.worker?.disconnect();
}

const WORKER_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM'];

async function startReviewerDashboard(config: Config, log: Logger): Promise<Started> {
  const apiUrl = apiUrlOf(config);
  const dashboard = await startDashboard(config, { apiUrl, log });
  log.info(`Greenlight dashboard listening on ${dashboard.url}`, { api: apiUrl });
  return dashboard;
}

function explain(error: unknown): never {
  if (error instanceof PortInUseError) {
    throw new CliError(`${error.message}; choose another with --port / --dashboard-port or api_port / dashboard_port in greenlight.yaml`, 1);
  }
  if (error instanceof DashboardNotBuiltError) throw new CliError(`${error.message}, or start with --api-only`, 1);
  throw error;
}

const START_FLAG_NAMES: Partial<Record<ConfigKey, string>> = { api_port: '--port', api_host: '--host', dashboard_port: '--dashboard-port' };

/** Runs the API and the dashboard (or one of them) until SIGINT or SIGTERM, then stops gracefully. */
export async function runStart(options: StartOptions): Promise<void> {
  if (options.apiOnly && options.dashboardOnly) throw new CliError('--api-only and --dashboard-only exclude each other', 2);
  const flags: Partial<Record<ConfigKey, string>> = {
    api_port: options.port,
    api_host: options.host,
    dashboard_port: options.dashboardPort,
    allow_unauthenticated_network: options.allowUnauthenticatedNetwork ? 'true' : undefined,
  };
  const sources = { file: options.config, flags, flagNames: START_FLAG_NAMES };
  const readConfig = (): Config => loadConfig(sources).config;
  const { config, file } = loadConfig(sources);
  const workers = options.workers ?? 1;
  if (workers > 1 && sqliteFile(config) !== null) {
    throw new CliError('--workers needs PostgreSQL (database_url: postgres://…): on SQLite one process owns the database file', 2);
  }
  if (workers > 1 && options.dashboardOnly) throw new CliError('--workers runs API processes; it has no use with --dashboard-only', 2);
  const log = createLogger();
  if (cluster.isWorker) return runApiWorker(config, readConfig, log);
  const stop = stopRequested();
  log.info('starting Greenlight', { config: file ?? '(defaults)' });

  // Stopped in the order started: the API answers its waiting agents, also those reached
  // through the dashboard's proxy, before the dashboard goes.
  const running: Stoppable[] = [];
  let api: Started | undefined;
  let dashboard: Started | undefined;
  try {
    if (!options.dashboardOnly) {
      api = workers > 1 ? await startApiWorkers(workers, config, log) : await startApi(config, readConfig, log, { pidFile: true });
      running.push(api);
    }
    if (!options.apiOnly) running.push((dashboard = await startReviewerDashboard(config, log)));
  } catch (error) {
    for (const part of running.reverse()) await part.close();
    explain(error);
  }
  showToPerson(readyBanner({ api: api?.url, dashboard: dashboard?.url, dataDir: config.data_dir }));
  releaseYoungGeneration();
  await runUntilStopped(running, log, stop);
}
