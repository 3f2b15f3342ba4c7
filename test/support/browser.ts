import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright';
import { afterAll, beforeAll, expect } from 'vitest';
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
 * A browser context of a self-hosted reviewer who was asked their name once already and gave
 * none, as the dashboard remembers in localStorage: their decisions go out without the prompt
 * a first decision brings (test/browser/review-links.test.ts tests the prompt itself).
 */
export async function reviewerContext(browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  // The dashboard's page only: a frame it shows (an attachment's preview) may have no storage.
  await context.addInitScript(() => {
    if (window.top === window && window.localStorage) window.localStorage.setItem('greenlight.reviewerNameAsked', 'yes');
  });
  return context;
}

/**
 * A new page on the dashboard at `url`, in a context of its own whose clock the test can move
 * (time otherwise runs as usual), once its live connection is open. A page error fails the test.
 */
export async function openLiveDashboard(browser: Browser, url: string, options: { width?: number; height?: number; bypassCSP?: boolean } = {}): Promise<Page> {
  const context = await reviewerContext(browser, { viewport: { width: options.width ?? 1280, height: options.height ?? 800 }, bypassCSP: options.bypassCSP ?? false });
  await context.clock.install();
  const page = await context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(url);
  await expect.poll(() => page.locator('.live').textContent()).toBe('Live');
  return page;
}

/**
 * Moves the page's clock past the undo window, so the decisions held now are sent, rather than
 * waiting five seconds for each. The page's context must have had `clock.install()` before it
 * loaded; time otherwise runs on it as usual.
 */
export async function letUndoWindowPass(page: Page): Promise<void> {
  await page.clock.fastForward(UNDO_WINDOW_MS);
}

/**
 * What axe-core finds wrong on the page as it is now (labels, contrast, roles, headings), one
 * line per rule. The checker is injected as a script of the test's own, which the page's CSP
 * refuses: open the page in a context with `bypassCSP`.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    const result = await axe.run(document);
    return result.violations.map((v) => `${v.id}: ${v.impact} (${v.nodes.length})`);
  });
}
