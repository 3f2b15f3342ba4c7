import type { Config } from '../config/settings';
import type { EventFeed } from '../domain/shared/events';
import { INSTALLATION } from '../domain/shared/principal';
import { launchApi, type StartOptions } from './api-server';

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
  const { running, services } = await launchApi(config, options);
  const { feed, reviews } = services;
  return {
    url: running.url,
    port: running.port,
    databaseLocation: running.databaseLocation,
    events: { on: (type, listener) => feed.on(type, listener) },
    pendingCount: async () => (await reviews.reading.list(INSTALLATION, { status: 'pending' }, 1, 1)).total,
    close: () => running.close(),
  };
}
