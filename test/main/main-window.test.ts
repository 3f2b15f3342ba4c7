import { afterEach, describe, expect, it } from 'vitest';
import { CHANNELS } from '../../main/bridge';
import { appReady } from '../../main/modules/desktop-module';
import { mainWindow } from '../../main/modules/main-window';
import { servers } from '../../main/modules/servers';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

async function withWindow() {
  desktop = await desktopOnFakes();
  await desktop.enable(appReady, servers, mainWindow);
  const [window] = desktop.electron.windows;
  await expect.poll(() => window.visible).toBe(true);
  return { ...desktop, window };
}

describe('the main window', () => {
  it('opens one window on the dashboard, sandboxed with the preload bridge, shown once ready', async () => {
    const { ctx, electron, window } = await withWindow();
    expect(electron.windows).toHaveLength(1);
    expect(window.loadedUrl).toBe(ctx.servers.dashboardUrl);
    expect(window.options).toMatchObject({
      title: 'Greenlight',
      show: false,
      webPreferences: { preload: ctx.files.preload, sandbox: true, contextIsolation: true, nodeIntegration: false },
    });
  });

  it('keeps the window on the dashboard: other pages open in the system browser, and only notifications are permitted', async () => {
    const { ctx, electron, window } = await withWindow();
    expect(window.webContents.navigate(`${ctx.servers.dashboardUrl}/#/history`)).toBe(false);
    expect(window.webContents.navigate('https://example.com/docs')).toBe(true);
    expect(window.webContents.navigate(`${ctx.servers.api?.url}/docs`)).toBe(true);
    expect(electron.openedExternally).toEqual(['https://example.com/docs']);
    expect(electron.permissionGranted('notifications')).toBe(true);
    expect(electron.permissionGranted('media')).toBe(false);
  });

  it('a request for a review brings the window forward and tells the dashboard to open it', async () => {
    const { ctx, window } = await withWindow();
    window.minimize();
    ctx.events.emit('window.requested', { reviewId: 42 });
    expect(window.isMinimized()).toBe(false);
    expect(window.focused).toBe(true);
    expect(window.webContents.sent).toEqual([[CHANNELS.openReview, 42]]);
  });

  it('the dock (activate) brings a hidden window back', async () => {
    const { electron, window } = await withWindow();
    window.hide();
    electron.app.emit('activate');
    expect(window.visible).toBe(true);
    expect(window.focused).toBe(true);
  });

  it('opens a new window on the dashboard when asked after the last one closed', async () => {
    const { ctx, electron, window } = await withWindow();
    window.close();
    expect(window.isDestroyed()).toBe(true);
    ctx.events.emit('window.requested', { reviewId: null });
    expect(electron.windows).toHaveLength(2);
    expect(electron.windows[1].loadedUrl).toBe(ctx.servers.dashboardUrl);
    expect(electron.windows[1].visible).toBe(true);
  });
});
