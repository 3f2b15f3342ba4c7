import type { AddressInfo } from 'node:net';
import type { ClientConnections } from '../http/connections';
import type { Logger } from '../logging';

export class PortInUseError extends Error {
  constructor(readonly host: string, readonly port: number) {
    super(`port ${port} on ${host} is already in use`);
    this.name = 'PortInUseError';
  }
}

export interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting connections and requests, runs `answerWaiting` so held requests get their
   * answers, and closes once every request taken has been answered. Requests still arriving
   * after `drainMs` (a slow upload) are cut: nothing of them was stored.
   */
  close(drainMs: number, answerWaiting?: () => void): Promise<void>;
}

/** After the drain, how long requests that fully arrived get to be answered before everything is cut. */
const ANSWER_GRACE_MS = 10_000;

function within(ms: number, work: Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([work.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/** Listens on `host:port` with `connections`' server; a port taken is a `PortInUseError`. */
export function listen(connections: ClientConnections, host: string, port: number, log: Logger): Promise<Listening> {
  const { server } = connections;
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error);
    };
    server.once('error', onError);
    // No deeper than the connections' burst reserve: one round of accepting takes in the whole backlog.
    server.listen({ port, host, backlog: connections.limits.burstReserve }, () => {
      server.off('error', onError);
      const actualPort = (server.address() as AddressInfo).port;
      // Accepting can fail for a moment (the system out of descriptors or memory); unheard, the error would end the process.
      server.on('error', (error: NodeJS.ErrnoException) => log.warn('could not accept a connection', { port: actualPort, code: error.code }));
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${actualPort}`,
        port: actualPort,
        close: async (drainMs, answerWaiting) => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          connections.drain();
          answerWaiting?.();
          if (!(await within(drainMs, connections.settled())) && connections.dropUnfinishedRequests() > 0) {
            if (!(await within(ANSWER_GRACE_MS, connections.settled()))) {
              log.warn('shutdown cut requests that were still being answered', { port: actualPort });
            }
          }
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}
