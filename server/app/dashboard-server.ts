import type { Config } from '../config/settings';
import { createDashboardApp } from '../dashboard/app';
import { connectionLimitsFor } from '../http/connections';
import { httpServerFor } from '../http/express-server';
import { exposureOf, warnIfOpenWithoutKey } from '../http/exposure';
import { type Logger, silentLogger } from '../logging';
import { listen } from './listen';

export interface RunningDashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The reviewer dashboard on `dashboard_host:dashboard_port`, forwarding `/api` to `apiUrl`. */
export async function startDashboard(config: Config, options: { apiUrl: string; log?: Logger; staticDir?: string }): Promise<RunningDashboard> {
  const log = options.log ?? silentLogger;
  const exposure = exposureOf(config, 'dashboard_host');
  const app = createDashboardApp({ apiUrl: options.apiUrl, log, staticDir: options.staticDir, exposure, trustedProxies: config.trusted_proxies });
  const limits = connectionLimitsFor({ maxWaitingRequests: config.max_waiting_requests, outgoingSockets: 0 });
  const listening = await listen(httpServerFor(app, limits), config.dashboard_host, config.dashboard_port, log);
  warnIfOpenWithoutKey(exposure, log, 'the dashboard', listening, 'read and decide every review through it');
  return { url: listening.url, port: listening.port, close: () => listening.close(1_000) };
}
