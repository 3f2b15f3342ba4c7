import path from 'node:path';
import {
  type Config,
  type DesktopServer,
  loadConfig,
  type Logger,
  PortInUseError,
  type RunningDashboard,
  startDashboard,
  startDesktopServer,
} from '../../server';
import type { DesktopEvents } from './desktop-events';
import { configOverrides, type SettingsStore } from './desktop-settings';

interface ServerSources {
  /** greenlight.yaml is looked for here, and the data goes to its `data/`. */
  userData: string;
  env: NodeJS.ProcessEnv;
  settings: SettingsStore;
  events: DesktopEvents;
  log: Logger;
}

/**
 * The API and the dashboard server this process runs. The API starts again when LAN access
 * changes, with the configuration read again under the new settings; the dashboard keeps
 * running and forwards to it. What the API publishes reaches `events`, from whichever API runs.
 */
export class InProcessServers {
  private apiConfig: Config | undefined;
  private runningApi: DesktopServer | undefined;
  private dashboard: RunningDashboard | undefined;
  private readonly detach: Array<() => void> = [];

  constructor(private readonly sources: ServerSources) {}

  /** The configuration the API was last started with. */
  get config(): Config {
    if (!this.apiConfig) throw new Error('the API has not been started');
    return this.apiConfig;
  }

  /** Undefined while the API restarts. */
  get api(): DesktopServer | undefined {
    return this.runningApi;
  }

  get dashboardUrl(): string {
    if (!this.dashboard) throw new Error('the dashboard server has not been started');
    return this.dashboard.url;
  }

  /** Throws PortInUseError when the API's port is taken: what to do then is the caller's choice. */
  async startApi(): Promise<void> {
    const { userData, env, settings, events, log } = this.sources;
    const { config } = loadConfig({ cwd: userData, env, defaults: { data_dir: path.join(userData, 'data') }, overrides: configOverrides(settings.current) });
    this.apiConfig = config;
    const api = await startDesktopServer(config, { log });
    this.runningApi = api;
    log.info(`Greenlight API listening on ${api.url}`, { database: api.databaseLocation, lanAccess: settings.current.lanAccess });
    this.detach.push(
      api.events.on('review.created', (review) => events.emit('review.created', review)),
      api.events.on('review.decided', (review) => events.emit('review.decided', review)),
    );
    events.emit('api.started', undefined);
  }

  async stopApi(): Promise<void> {
    for (const off of this.detach.splice(0)) off();
    await this.runningApi?.close();
    this.runningApi = undefined;
  }

  async startDashboard(): Promise<void> {
    const { config } = this;
    const options = { apiUrl: `http://127.0.0.1:${config.api_port}`, log: this.sources.log };
    try {
      this.dashboard = await startDashboard(config, options);
    } catch (error) {
      if (!(error instanceof PortInUseError)) throw error;
      // The window needs a port, not that one: another Greenlight may be serving its dashboard there.
      this.dashboard = await startDashboard({ ...config, dashboard_port: 0 }, options);
    }
  }

  async close(): Promise<void> {
    await this.stopApi();
    await this.dashboard?.close();
    this.dashboard = undefined;
  }
}
