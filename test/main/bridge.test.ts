import { afterEach, describe, expect, it } from 'vitest';
import { CHANNELS, type DesktopSettingsView } from '../../main/bridge';
import { bridge } from '../../main/modules/bridge-handlers';
import { appReady } from '../../main/modules/desktop-module';
import { servers } from '../../main/modules/servers';
import { type DesktopOnFakes, desktopOnFakes } from '../support/electron-fakes';

let desktop: DesktopOnFakes;
afterEach(() => desktop.close());

/** The dashboard calling the shell, as the preload script does. */
async function dashboard() {
  desktop = await desktopOnFakes();
  await desktop.enable(appReady, servers, bridge);
  const page = `${desktop.ctx.servers.dashboardUrl}/#/queue`;
  return { ...desktop, call: (channel: string, ...args: unknown[]) => desktop.electron.invoke(page, channel, ...args) };
}

describe('the bridge module', () => {
  it('gives the dashboard no API key, and no addresses, while LAN access is off', async () => {
    const { call } = await dashboard();
    expect(await call(CHANNELS.getApiKey)).toBeNull();
    expect(await call(CHANNELS.getSettings)).toEqual({ notifications: 'critical', lanAccess: false, lanUrls: [], apiKey: null, slack: { botTokenSet: false, appTokenSet: false, channel: '' } });
  });

  it('turning LAN access on answers once the API listens with the key, which the dashboard then uses too', async () => {
    const { ctx, apiPort, call } = await dashboard();
    const view = (await call(CHANNELS.updateSettings, { lanAccess: true })) as DesktopSettingsView;
    const key = ctx.settings.current.lanApiKey;
    expect(view).toMatchObject({ lanAccess: true, apiKey: key });
    for (const url of view.lanUrls) expect(url).toMatch(new RegExp(`^http://[\\d.]+:${apiPort}$`));
    expect(await call(CHANNELS.getApiKey)).toBe(key);
    const reviews = await fetch(`http://127.0.0.1:${apiPort}/reviews`, { headers: { authorization: `Bearer ${key}` } });
    expect(reviews.status).toBe(200);
  });

  it('copies the LAN key to the clipboard, once there is one', async () => {
    const { ctx, electron, call } = await dashboard();
    await call(CHANNELS.copyApiKey);
    expect(electron.clipboard.text).toBe('');
    await call(CHANNELS.updateSettings, { lanAccess: true });
    await call(CHANNELS.copyApiKey);
    expect(electron.clipboard.text).toBe(ctx.settings.current.lanApiKey);
  });

  it("refuses every page but the dashboard's, the API's own docs too", async () => {
    const { ctx, electron } = await dashboard();
    await expect(electron.invoke(`${ctx.servers.api?.url}/docs`, CHANNELS.getSettings)).rejects.toThrow(/refused IPC/);
  });
});
