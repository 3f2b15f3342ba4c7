import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load';
import type { Config } from '../config/settings';
import { describePolicy } from '../domain/routing/review-policy';
import type { Logger } from '../logging';
import type { RunningServer } from '../app/api-server';
import { CliError } from './errors';

/** Where a running `greenlight start` leaves its process id, so `greenlight reload` can find it. */
export function pidFileOf(config: Pick<Config, 'data_dir'>): string {
  return path.join(config.data_dir, 'greenlight.pid');
}

/**
 * On SIGHUP, reads the configuration again and puts its `routing` policy in force. Waiting
 * agents are untouched. An invalid edit keeps the policy in force and says why.
 */
export function reloadPolicyOnHangup(server: Pick<RunningServer, 'replacePolicy'>, readConfig: () => Config, log: Logger): () => void {
  const reload = (): void => {
    try {
      const { routing } = readConfig();
      server.replacePolicy(routing);
      log.info('policy reloaded', { policy: describePolicy(routing) });
    } catch (error) {
      log.error(`policy not reloaded; the previous one stays in force: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  process.on('SIGHUP', reload);
  return () => process.off('SIGHUP', reload);
}

/** Whether `pid` is a live Greenlight process (checked by its command line where the platform shows it). */
function isGreenlight(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const cmdline = `/proc/${pid}/cmdline`;
  // A stale pid file may name a process that has nothing to do with us; a hang-up would end it.
  return !fs.existsSync(cmdline) || /greenlight|main\.js/i.test(fs.readFileSync(cmdline, 'utf8'));
}

/** `greenlight reload`: checks the edited policy, then asks the running server to load it. */
export function runReload(options: { config?: string }, out: NodeJS.WritableStream): void {
  if (process.platform === 'win32') throw new CliError('reload needs SIGHUP, which Windows does not have; restart Greenlight instead', 1);
  const { config } = loadConfig({ file: options.config });
  const pidFile = pidFileOf(config);
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    throw new CliError(`no running Greenlight API found for ${config.data_dir} (no ${path.basename(pidFile)}); is greenlight start running?`, 1);
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isGreenlight(pid)) {
    throw new CliError(`the Greenlight API named in ${pidFile} (pid ${pid}) is not running`, 1);
  }
  process.kill(pid, 'SIGHUP');
  out.write(`Asked Greenlight (pid ${pid}) to reload its policy:\n${describePolicy(config.routing).map((line) => `  ${line}\n`).join('')}`);
}
