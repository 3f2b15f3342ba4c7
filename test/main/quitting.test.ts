import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { appReady } from '../../main/modules/desktop-module';
import { mainWindow } from '../../main/modules/main-window';
import { quitting } from '../../main/modules/quitting';
import { servers } from '../../main/modules/servers';
import { tray } from '../../main/modules/tray';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';
import { call, isServing } from '../support/server';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

async function running(options: { tray?: boolean } = {}) {
  desktop = await desktopOnFakes(options);
  await desktop.enable(quitting, appReady, servers, tray, mainWindow);
  const api = desktop.ctx.servers.api!.url;
  return { ...desktop, api, window: desktop.electron.windows[0] };
}

describe('quitting', () => {
  it('closing the window keeps the server and the tray', async () => {
    const { electron, api, window } = await running();
    window.close();
    expect(window.isDestroyed()).toBe(false);
    expect(window.visible).toBe(false);
    expect(electron.app.exitCode).toBeUndefined();
    expect(electron.trays).toHaveLength(1);
    expect(await isServing(api)).toBe(true);
  });

  it('without a system tray, closing the window quits: the servers stop, then the app exits', async () => {
    const { electron, api, window, logs } = await running({ tray: false });
    expect(logs()).toContainEqual(expect.objectContaining({ level: 'warn', message: 'no system tray here; closing the window quits Greenlight' }));
    window.close();
    expect(await electron.app.exited).toBe(0);
    expect(await isServing(api)).toBe(false);
  });

  it('Quit answers the agents waiting on the API with their review, then exits', async () => {
    const { ctx, electron, api } = await running();
    const created = new Promise<void>((resolve) => ctx.events.on('review.created', () => resolve()));
    const agent = call(api, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 412 to production', blocking: true });
    await created;

    electron.trays[0].choose('Quit Greenlight');
    expect(await agent).toMatchObject({ status: 503, body: { review_id: expect.any(Number) } });
    expect(await electron.app.exited).toBe(0);
    expect(electron.windows[0].isDestroyed()).toBe(true);
  });

  it('stops what the modules started once, however often quitting is asked for', async () => {
    desktop = await desktopOnFakes();
    await desktop.enable(quitting);
    let stops = 0;
    desktop.ctx.lifecycle.onQuit(async () => {
      await delay(20);
      stops++;
    });
    desktop.electron.app.quit();
    desktop.electron.app.quit();
    expect(await desktop.electron.app.exited).toBe(0);
    expect(stops).toBe(1);
  });
});
