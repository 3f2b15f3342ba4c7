import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../logging';
import { CliError } from './errors';

export interface Workers {
  /** Where they listen, as the first of them reported it. */
  url: string;
  /** Sends `signal` to every worker (SIGHUP: reload the policy). */
  signal(signal: NodeJS.Signals): void;
  /** Stops every worker gracefully and waits for them to exit. */
  close(): Promise<void>;
}

function listeningUrl(address: { address: string | null; port: number }): string {
  const host = address.address && address.address !== '::' && address.address !== '0.0.0.0' ? address.address : '127.0.0.1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Forks a worker (this same command, which runs the API alone in it) and resolves once it listens. */
function fork(): Promise<{ worker: Worker; url: string }> {
  const worker = cluster.fork();
  return new Promise((resolve, reject) => {
    const failed = (code: number | null): void => reject(new CliError(`an API worker exited with code ${code} before it listened; its log says why`, 1));
    worker.once('exit', failed);
    worker.once('listening', (address) => {
      worker.off('exit', failed);
      resolve({ worker, url: listeningUrl(address) });
    });
  });
}

/**
 * `greenlight start --workers N`: N API processes (node:cluster) sharing the port and the
 * PostgreSQL database; a decision made through one reaches agents waiting on another. A worker
 * that dies is replaced. Closing stops them all gracefully: each answers its waiting agents.
 */
export async function startWorkers(count: number, log: Logger): Promise<Workers> {
  let stopping = false;
  const started = await Promise.all(Array.from({ length: count }, () => fork()));
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error('an API worker stopped; starting another', { pid: worker.process.pid, code, signal });
    fork().catch((error: unknown) => log.error('could not start another API worker', { error: String(error) }));
  });
  const all = (): Worker[] => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
  return {
    url: started[0].url,
    signal: (signal) => {
      for (const worker of all()) worker.process.kill(signal);
    },
    close: async () => {
      stopping = true;
      const exits = all().map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
      for (const worker of all()) worker.process.kill('SIGTERM');
      await Promise.all(exits);
    },
  };
}
