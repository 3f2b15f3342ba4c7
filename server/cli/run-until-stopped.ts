import type { Logger } from '../logging';

export interface Stoppable {
  close(): Promise<void>;
}

/**
 * Keeps `running` up until SIGINT or SIGTERM (or `stopWhen` calls back), then closes each part
 * in order. A second signal during shutdown exits at once.
 */
export async function runUntilStopped(running: Stoppable[], log: Logger, stopWhen?: (stop: (reason: string) => void) => void): Promise<void> {
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (reason: string): void => {
      if (stopping) return;
      stopping = true;
      log.info('shutting down', { reason });
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      (async () => {
        for (const part of running) await part.close();
      })().then(resolve, (error: unknown) => {
        log.error('shutdown failed', { error: String(error) });
        process.exit(1);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopWhen?.(stop);
  });
  log.info('stopped');
}
