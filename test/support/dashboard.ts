import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../server/config/settings';
import { type RunningDashboard, startDashboard } from '../../server/app/dashboard-server';
import type { TestServer } from './server';
import { makeTempDir } from './temp';

export interface TestDashboard extends RunningDashboard {
  dispose(): Promise<void>;
}

/**
 * The dashboard on a random port, forwarding /api to `api`. It serves a one-line page of its own:
 * the dashboard refuses to start without an index.html, and the tests that use this one are about
 * what it forwards and refuses, so they must not depend on the app having been built.
 */
export async function startTestDashboard(api: TestServer, overrides: Partial<Config> = {}): Promise<TestDashboard> {
  const staticDir = makeTempDir('greenlight-dashboard-');
  try {
    fs.writeFileSync(path.join(staticDir.dir, 'index.html'), '<!doctype html><title>dashboard</title>');
    const dashboard = await startDashboard({ ...api.config, dashboard_port: 0, ...overrides }, { apiUrl: api.url, staticDir: staticDir.dir });
    return {
      ...dashboard,
      dispose: async () => {
        await dashboard.close();
        staticDir.remove();
      },
    };
  } catch (error) {
    staticDir.remove();
    throw error;
  }
}
