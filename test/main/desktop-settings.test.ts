import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server';
import { changeSettings, configOverrides, DEFAULT_SETTINGS, lanUrls, needsRestart, readSettings, SettingsStore, settingsView, writeSettings } from '../../main/modules/desktop-settings';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir('greenlight-desktop-');
});
afterEach(() => temp.remove());

let keys = 0;
const newKey = () => `generated-key-number-${++keys}-abcdef`;

describe('LAN access', () => {
  it('turns authentication on with a generated key and binds the API to every interface', () => {
    const on = changeSettings(DEFAULT_SETTINGS, { lanAccess: true }, newKey);
    expect(on.lanAccess).toBe(true);
    expect(on.lanApiKey).toMatch(/^generated-key-number-\d+-abcdef$/);

    const { config } = loadConfig({ cwd: temp.dir, env: {}, overrides: configOverrides(on) });
    expect(config).toMatchObject({ api_host: '0.0.0.0', enable_auth: true, api_key: on.lanApiKey });
  });

  it('keeps the same key when turned off and on again, so agents need not be reconfigured', () => {
    const on = changeSettings(DEFAULT_SETTINGS, { lanAccess: true }, newKey);
    const off = changeSettings(on, { lanAccess: false }, newKey);
    const again = changeSettings(off, { lanAccess: true }, newKey);
    expect(again.lanApiKey).toBe(on.lanApiKey);
    expect(loadConfig({ cwd: temp.dir, env: {}, overrides: configOverrides(off) }).config).toMatchObject({ api_host: '127.0.0.1', enable_auth: false });
  });

  it('binds to loopback when LAN access is off, even if greenlight.yaml says otherwise', () => {
    fs.writeFileSync(path.join(temp.dir, 'greenlight.yaml'), 'api_host: 0.0.0.0\n');
    expect(loadConfig({ cwd: temp.dir, env: {}, overrides: configOverrides(DEFAULT_SETTINGS) }).config.api_host).toBe('127.0.0.1');
  });

  it('lists the API address on each external IPv4 network', () => {
    const urls = lanUrls(
      {
        lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true } as never],
        eth0: [{ address: '192.168.1.20', family: 'IPv4', internal: false } as never, { address: 'fe80::1', family: 'IPv6', internal: false } as never],
      },
      8000,
    );
    expect(urls).toEqual(['http://192.168.1.20:8000']);
  });
});

describe('Slack over Socket Mode', () => {
  it('puts the tokens and channel into the API\'s configuration, shows only whether tokens are set, and restarts the API for a change', () => {
    const set = changeSettings(DEFAULT_SETTINGS, { slack: { botToken: 'xoxb-1-2-abc', appToken: 'xapp-1-A1-abc', channel: 'C0123ABC' } }, newKey);
    expect(loadConfig({ cwd: temp.dir, env: {}, overrides: configOverrides(set) }).config).toMatchObject({ slack_bot_token: 'xoxb-1-2-abc', slack_app_token: 'xapp-1-A1-abc', slack_channel: 'C0123ABC' });
    expect(settingsView(set, {}, 8000).slack).toEqual({ botTokenSet: true, appTokenSet: true, channel: 'C0123ABC' });
    expect(JSON.stringify(settingsView(set, {}, 8000))).not.toContain('xoxb-');
    expect(needsRestart(DEFAULT_SETTINGS, set)).toBe(true);
    expect(needsRestart(set, changeSettings(set, { notifications: 'off' }, newKey))).toBe(false);
    const removed = changeSettings(set, { slack: { botToken: '' } }, newKey);
    expect(loadConfig({ cwd: temp.dir, env: {}, overrides: configOverrides(removed) }).config.slack_bot_token).toBe('');
    expect(() => changeSettings(set, { slack: { channel: '#general' } }, newKey)).toThrow(/channel/);
  });
});

describe('settings file', () => {
  it('round-trips, readable by its owner only', () => {
    const file = path.join(temp.dir, 'desktop-settings.json');
    const settings = changeSettings(DEFAULT_SETTINGS, { lanAccess: true, notifications: 'critical_and_high' }, newKey);
    writeSettings(file, settings);
    expect(readSettings(file)).toEqual(settings);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('falls back to the defaults for a damaged file or bad values', () => {
    const file = path.join(temp.dir, 'desktop-settings.json');
    fs.writeFileSync(file, '{ not json');
    expect(readSettings(file)).toEqual(DEFAULT_SETTINGS);
    fs.writeFileSync(file, JSON.stringify({ notifications: 'loud', lanAccess: 'yes', lanApiKey: 'short' }));
    expect(readSettings(file)).toEqual(DEFAULT_SETTINGS);
    expect(readSettings(path.join(temp.dir, 'missing.json'))).toEqual(DEFAULT_SETTINGS);
  });

  it('refuses an unknown notification level', () => {
    expect(() => changeSettings(DEFAULT_SETTINGS, { notifications: 'loud' as never }, newKey)).toThrow(/unknown notification level/);
  });
});

describe('SettingsStore', () => {
  it('starts from the saved settings', () => {
    const file = path.join(temp.dir, 'desktop-settings.json');
    writeSettings(file, { ...DEFAULT_SETTINGS, notifications: 'off' });
    expect(new SettingsStore(file, newKey).current.notifications).toBe('off');
  });

  it('saves a change, and has acted on it when the update returns', async () => {
    const file = path.join(temp.dir, 'desktop-settings.json');
    const store = new SettingsStore(file, newKey);
    const seen: string[] = [];
    store.onChange(async (before, after) => {
      await delay(20);
      seen.push(`${before.lanAccess} → ${after.lanAccess}`);
    });
    const after = await store.update({ lanAccess: true });
    expect(seen).toEqual(['false → true']);
    expect(readSettings(file)).toEqual(after);
    expect(store.current).toEqual(after);
  });
});
