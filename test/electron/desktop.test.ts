import path from 'node:path';
import { _electron as electron, type ElectronApplication, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../support/cli';
import { makeTempDir } from '../support/temp';

/**
 * The desktop app itself, through Playwright's Electron driver. Electron's binary cannot be
 * downloaded on every machine (it is fetched on first `npm run desktop`); where it is missing
 * these tests are reported as skipped, with the reason in their title.
 */
function electronBinary(): string | undefined {
  try {
    return require('electron') as string;
  } catch {
    return undefined;
  }
}

const binary = electronBinary();
const title = binary
  ? 'the desktop app (@electron)'
  : 'the desktop app (@electron) — skipped: no Electron binary on this machine; run `node node_modules/electron/install.js` to fetch it';
if (!binary) console.warn(`[electron tests] ${title}`);

const MAIN = path.resolve(__dirname, '..', '..', 'dist', 'main', 'main.js');

describe.skipIf(!binary)(title, () => {
  let temp: ReturnType<typeof makeTempDir>;
  let app: ElectronApplication;
  let window: Page;
  let api: string;

  beforeAll(async () => {
    temp = makeTempDir('greenlight-electron-');
    const [apiPort, dashboardPort] = await freePorts(2);
    api = `http://127.0.0.1:${apiPort}`;
    app = await electron.launch({
      executablePath: binary,
      args: [MAIN, `--user-data-dir=${temp.dir}`, '--no-sandbox'],
      env: { ...process.env, GREENLIGHT_API_PORT: String(apiPort), GREENLIGHT_DASHBOARD_PORT: String(dashboardPort) },
    });
    window = await app.firstWindow();
    // Record native notifications: the test cannot look at the desktop's notification centre.
    await app.evaluate(({ Notification }) => {
      const shown: string[] = [];
      (globalThis as unknown as { shownNotifications: string[] }).shownNotifications = shown;
      const show = Notification.prototype.show;
      Notification.prototype.show = function (this: Electron.Notification) {
        shown.push(this.title);
        return show.call(this);
      };
    });
  });

  afterAll(async () => {
    await app?.close();
    temp?.remove();
  });

  async function post(body: unknown): Promise<any> {
    const response = await fetch(`${api}/reviews`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return response.json();
  }

  it('opens a window on the dashboard, with the renderer sandboxed and isolated', async () => {
    await expect.poll(() => window.locator('.live').textContent()).toBe('Live');
    expect(await window.title()).toContain('Greenlight');
    expect(await window.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined');
    expect(await window.evaluate(() => (globalThis as { greenlight?: { desktop: boolean } }).greenlight?.desktop)).toBe(true);
  });

  it('raises a native notification for a critical review', async () => {
    await post({ task_type: 'desktop-critical', proposed_action: 'Rotate the production database password', urgency: 'critical' });
    await expect
      .poll(() => app.evaluate(() => (globalThis as unknown as { shownNotifications: string[] }).shownNotifications))
      .toContain('Critical review: desktop-critical');
  });

  it('approves from the window and unblocks the waiting agent', async () => {
    const agent = fetch(`${api}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'desktop-approve', proposed_action: 'Restart the ingest workers', urgency: 'critical', blocking: true }),
    }).then((response) => response.json() as Promise<any>);
    const row = window.locator('.queue-item', { hasText: 'desktop-approve' });
    await expect.poll(() => row.count()).toBe(1);
    await row.click();
    await window.getByRole('button', { name: /^Approve/ }).click();
    expect(await agent).toMatchObject({ status: 'approved', decision: { decision_type: 'approve' } });
  });
});
