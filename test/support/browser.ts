import type { Browser, Page } from 'playwright';
import { afterAll, beforeAll } from 'vitest';
import { type RunningCli, startWithDashboard, stopProgram } from './cli';
import { makeTempDir } from './temp';
import { launchChromium } from '../../bench/chromium';
import { UNDO_WINDOW_MS } from '../../renderer/src/stores/undo-window';

// Shared with the benchmark, which cannot import from test/.
export { launchChromium };

export interface DashboardUnderTest {
  server: RunningCli;
  browser: Browser;
}

/**
 * Registers hooks that run `greenlight start` (API and dashboard) in a temporary directory,
 * prepared by `prepare` (say, a greenlight.yaml), and launch Chromium; both end with the file.
 */
export function dashboardInBrowser(prefix: string, prepare: (dir: string) => void = () => {}): DashboardUnderTest {
  const running = {} as DashboardUnderTest;
  let temp: ReturnType<typeof makeTempDir> | undefined;
  beforeAll(async () => {
    temp = makeTempDir(prefix);
    prepare(temp.dir);
    running.server = await startWithDashboard(temp.dir);
    running.browser = await launchChromium();
  });
  afterAll(async () => {
    await running.browser?.close();
    await stopProgram(running.server);
    temp?.remove();
  });
  return running;
}

/**
 * Moves the page's clock past the undo window, so the decisions held now are sent, rather than
 * waiting five seconds for each. The page's context must have had `clock.install()` before it
 * loaded; time otherwise runs on it as usual.
 */
export async function letUndoWindowPass(page: Page): Promise<void> {
  await page.clock.fastForward(UNDO_WINDOW_MS);
}
