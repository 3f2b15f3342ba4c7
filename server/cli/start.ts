import { loadConfig } from '../config/load';
import type { ConfigKey } from '../config/settings';
import { createLogger } from '../logging';
import { PortInUseError, startServer } from '../runtime';
import { CliError } from './errors';

export interface StartOptions {
  config?: string;
  port?: string;
  host?: string;
  apiOnly?: boolean;
}

/** Runs the API until SIGINT or SIGTERM, then shuts down gracefully. */
export async function runStart(options: StartOptions): Promise<void> {
  const flags: Partial<Record<ConfigKey, string>> = { api_port: options.port, api_host: options.host };
  const { config, file } = loadConfig({ file: options.config, flags });
  const log = createLogger();

  let server;
  try {
    server = await startServer(config, { log });
  } catch (error) {
    if (error instanceof PortInUseError) {
      throw new CliError(`${error.message}; choose another with --port or api_port in greenlight.yaml`, 1);
    }
    throw error;
  }
  log.info(`Greenlight API listening on ${server.url}`, {
    config: file ?? '(defaults)',
    database: server.services.db.file,
  });
  if (!config.enable_auth && !isLoopback(config.api_host)) {
    log.warn(`the API is open to the network: it listens on ${config.api_host} and enable_auth is false; anyone who can reach this machine can read and decide reviews`);
  }
  if (!options.apiOnly) {
    log.warn('the reviewer dashboard is not built yet in this version; only the API is running');
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      log.info('shutting down', { signal });
      process.once(signal, () => process.exit(130));
      server.close().then(resolve, (error: unknown) => {
        log.error('shutdown failed', { error: String(error) });
        process.exit(1);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log.info('stopped');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
