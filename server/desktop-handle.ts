import type { Config } from './config/settings';
import type { EventFeed } from './domain/events';
import { INSTALLATION } from './domain/ports';
import { type StartOptions, startServer } from './runtime';

/**
 * What the desktop shell holds of the API it runs in its process: the live events (for
 * notifications and the tray), the pending count, and how to stop it. Not the services.
 */
export interface DesktopServer {
  url: string;
  port: number;
  /** Where the data is, for the log. */
  databaseLocation: string;
  events: Pick<EventFeed, 'on'>;
  pendingCount(): Promise<number>;
  close(): Promise<void>;
}

export async function startDesktopServer(config: Config, options: StartOptions = {}): Promise<DesktopServer> {
  const server = await startServer(config, options);
  const { feed, reviews, db } = server.services;
  return {
    url: server.url,
    port: server.port,
    databaseLocation: db.location,
    events: { on: (type, listener) => feed.on(type, listener) },
    pendingCount: async () => (await reviews.reading.list(INSTALLATION, { status: 'pending' }, 1, 1)).total,
    close: () => server.close(),
  };
}
