import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHANNELS } from '../../main/bridge';
import { runDesktop } from '../../main/desktop';
import { freePorts } from '../support/cli';
import { type FakeElectron, fakeElectron } from '../support/electron-fakes';
import { call, isServing } from '../support/server';
import { makeTempDir } from '../support/temp';

/** `desktop.ts` as Electron runs it, its `electron` import answered by the stand-ins. */
const electron = vi.hoisted(() => {
  const holder = {
    fake: undefined as FakeElectron | undefined,
    parts: () => {
      if (!holder.fake) throw new Error('no stand-ins for Electron in this test');
      return holder.fake.parts;
    },
  };
  return holder;
});
vi.mock('electron', () => {
  const names = ['app', 'BrowserWindow', 'clipboard', 'dialog', 'ipcMain', 'Menu', 'Notification', 'session', 'shell', 'Tray'] as const;
  return Object.defineProperties({}, Object.fromEntries(names.map((name) => [name, { enumerable: true, get: () => electron.parts()[name] }])));
});

let temp: ReturnType<typeof makeTempDir>;
let fake: FakeElectron;
let api: string;
let dashboardPort: number;

async function launch(options: { singleInstanceLock?: boolean } = {}): Promise<void> {
  fake = fakeElectron({ userData: temp.dir, ...options });
  electron.fake = fake;
  await runDesktop();
}

beforeEach(async () => {
  temp = makeTempDir('greenlight-desktop-app-');
  let apiPort: number;
  [apiPort, dashboardPort] = await freePorts(2);
  api = `http://127.0.0.1:${apiPort}`;
  vi.stubEnv('GREENLIGHT_API_PORT', String(apiPort));
  vi.stubEnv('GREENLIGHT_DASHBOARD_PORT', String(dashboardPort));
  // The app logs to stdout, as it does under Electron.
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterEach(async () => {
  if (fake.app.exitCode === undefined) fake.app.quit();
  await fake.app.exited;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  temp.remove();
});

describe('the desktop app, on stand-ins for Electron', () => {
  it('opens the dashboard in its window, and a critical review raises a notification whose click opens it there', async () => {
    await launch();
    const [window] = fake.windows;
    expect(new URL(window.loadedUrl!).port).toBe(String(dashboardPort));
    await expect.poll(() => window.visible).toBe(true);

    const { id } = (await call(api, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 412 to production', urgency: 'critical' })).body;
    await expect.poll(() => fake.shownNotifications.map((n) => n.content.title)).toEqual(['Critical review: deploy']);

    window.close();
    expect(window.visible).toBe(false);
    fake.shownNotifications[0].click();
    expect(window.visible).toBe(true);
    expect(window.webContents.sent).toEqual([[CHANNELS.openReview, id]]);
    await expect.poll(() => fake.trays[0].tooltip).toBe('Greenlight — 1 review pending');
  });

  it('Quit in the tray closes the window, stops the servers and exits', async () => {
    await launch();
    await expect.poll(() => fake.trays[0].menu.length).toBeGreaterThan(0);
    fake.trays[0].choose('Quit Greenlight');
    expect(await fake.app.exited).toBe(0);
    expect(fake.windows[0].isDestroyed()).toBe(true);
    expect(await isServing(api)).toBe(false);
  });

  it('a second launch quits without starting anything', async () => {
    await launch({ singleInstanceLock: false });
    expect(await fake.app.exited).toBe(0);
    expect(fake.windows).toEqual([]);
    expect(await isServing(api)).toBe(false);
  });
});
