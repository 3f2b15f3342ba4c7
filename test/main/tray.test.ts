import { afterEach, describe, expect, it } from 'vitest';
import { appReady } from '../../main/modules/desktop-module';
import { mainWindow } from '../../main/modules/main-window';
import { servers } from '../../main/modules/servers';
import { tray } from '../../main/modules/tray';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';
import { call, sampleReview } from '../support/server';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

describe('the tray', () => {
  it('shows the pending count, and follows it as reviews arrive and are decided', async () => {
    desktop = await desktopOnFakes();
    await desktop.enable(appReady, servers, tray);
    const [icon] = desktop.electron.trays;
    const api = desktop.ctx.servers.api!.url;
    await expect.poll(() => icon.tooltip).toBe('Greenlight — 0 reviews pending');

    const first = (await call(api, 'POST', '/reviews', sampleReview)).body;
    await call(api, 'POST', '/reviews', sampleReview);
    await expect.poll(() => icon.tooltip).toBe('Greenlight — 2 reviews pending');

    await call(api, 'POST', `/reviews/${first.id}/decide`, { decision_type: 'approve' });
    await expect.poll(() => icon.tooltip).toBe('Greenlight — 1 review pending');
    expect(icon.menu.map((item) => item.label ?? item.type)).toEqual(['1 review pending', 'separator', 'Open Greenlight', 'Quit Greenlight']);
  });

  it('clicking the icon, or Open in its menu, brings the window back', async () => {
    desktop = await desktopOnFakes();
    await desktop.enable(appReady, servers, tray, mainWindow);
    const [icon] = desktop.electron.trays;
    const [window] = desktop.electron.windows;
    await expect.poll(() => icon.menu.length).toBeGreaterThan(0);

    window.hide();
    icon.click();
    expect(window.visible).toBe(true);
    window.hide();
    icon.choose('Open Greenlight');
    expect(window.visible).toBe(true);
  });
});
