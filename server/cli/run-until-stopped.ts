import type { Logger } from '../logging';

export interface Stoppable {
  close(): Promise<void>;
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
const EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };

/**
 * Resolves with the reason the first time one of `signals` arrives (or `stopWhen` calls back).
 * Listening starts at once, before anything is started or announced: a signal sent the moment
 * a "listening" line appears must not meet the default handler, which ends the process without
 * a shutdown.
 */
export function stopRequested(stopWhen?: (stop: (reason: string) => void) => void, signals: readonly NodeJS.Signals[] = STOP_SIGNALS): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      for (const name of signals) process.off(name, onSignal);
      resolve(signal);
    };
    for (const name of signals) process.on(name, onSignal);
    stopWhen?.(resolve);
  });
}

/**
 * Once `stop` resolves, closes each part of `running` in order. A second of `exitNowOn` during
 * shutdown exits at once.
 */
export async function runUntilStopped(running: Stoppable[], log: Logger, stop: Promise<string>, exitNowOn: readonly NodeJS.Signals[] = STOP_SIGNALS): Promise<void> {
  const reason = await stop;
  log.info('shutting down', { reason });
  for (const signal of exitNowOn) process.once(signal, () => process.exit(EXIT_CODES[signal] ?? 1));
  try {
    for (const part of running) await part.close();
  } catch (error) {
    log.error('shutdown failed', { error: String(error) });
    process.exit(1);
  }
  log.info('stopped');
}
