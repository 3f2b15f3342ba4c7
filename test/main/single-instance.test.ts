import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appReady } from '../../main/modules/desktop-module';
import { mainWindow } from '../../main/modules/main-window';
import { quitting } from '../../main/modules/quitting';
import { servers } from '../../main/modules/servers';
import { singleInstance } from '../../main/modules/single-instance';
import { tray } from '../../main/modules/tray';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

describe('one Greenlight per user', () => {
  it('a second launch quits before starting anything', async () => {
    desktop = await desktopOnFakes({ singleInstanceLock: false });
    const { ctx, electron, userData } = desktop;
    await desktop.enable(singleInstance, quitting, appReady, servers, mainWindow);
    expect(electron.app.exitCode).toBe(0);
    expect(ctx.servers.api).toBeUndefined();
    expect(electron.windows).toEqual([]);
    expect(fs.existsSync(path.join(userData, 'data'))).toBe(false);
  });

  it('a second launch brings the running window forward, even hidden in the tray', async () => {
    desktop = await desktopOnFakes();
    await desktop.enable(singleInstance, quitting, appReady, servers, tray, mainWindow);
    const { electron } = desktop;
    const [window] = electron.windows;
    window.close();
    expect(window.visible).toBe(false);

    electron.app.emit('second-instance');
    expect(window.visible).toBe(true);
    expect(window.focused).toBe(true);
    expect(electron.windows).toHaveLength(1);
    expect(electron.app.exitCode).toBeUndefined();
  });
});
