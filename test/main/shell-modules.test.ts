import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../main/bridge';
import { parseSettingsChange, registerBridgeHandlers } from '../../main/modules/bridge-handlers';
import { isHeadless } from '../../main/modules/launch-mode';
import { portConflictMessage } from '../../main/modules/port-conflict';
import { trayMenu, trayTooltip } from '../../main/modules/tray-menu';
import { startArguments } from '../../main/headless';

describe('isHeadless', () => {
  it.each([
    [['electron', '.', '--headless'], {}, true],
    [['electron', '.'], { GREENLIGHT_HEADLESS: '1' }, true],
    [['electron', '.'], { GREENLIGHT_HEADLESS: 'true' }, true],
    [['electron', '.'], { GREENLIGHT_HEADLESS: '0' }, false],
    [['electron', '.'], {}, false],
  ])('%j with %j → %s', (argv, env, expected) => {
    expect(isHeadless(argv, env)).toBe(expected);
  });
});

describe('startArguments', () => {
  it('passes --config, --port and --host through to start, and nothing else', () => {
    expect(startArguments(['electron', '.', '--headless', '--port', '9000', '--config=/etc/gl.yaml', '--inspect', '--host', '0.0.0.0'])).toEqual([
      '--port',
      '9000',
      '--config',
      '/etc/gl.yaml',
      '--host',
      '0.0.0.0',
    ]);
  });
});

describe('portConflictMessage', () => {
  it('names the port, the setting and the file to change', () => {
    const { title, message } = portConflictMessage(8000, '/home/dana/.config/Greenlight/greenlight.yaml');
    expect(title).toBe('Port 8000 is already in use');
    expect(message).toContain('another program is using port 8000');
    expect(message).toContain('set api_port in /home/dana/.config/Greenlight/greenlight.yaml');
    expect(message).toContain('GREENLIGHT_API_PORT');
  });
});

describe('trayMenu', () => {
  it('shows the pending count with Open and Quit', () => {
    const calls: string[] = [];
    const menu = trayMenu(3, { open: () => calls.push('open'), quit: () => calls.push('quit') });
    expect(menu.map((item) => item.label ?? item.type)).toEqual(['3 reviews pending', 'separator', 'Open Greenlight', 'Quit Greenlight']);
    menu[2].click?.();
    menu[3].click?.();
    expect(calls).toEqual(['open', 'quit']);
    expect(trayTooltip(1)).toBe('Greenlight — 1 review pending');
  });
});

describe('registerBridgeHandlers', () => {
  type Listener = (event: { senderFrame: { url: string } | null }, ...args: unknown[]) => unknown;

  function register() {
    const handlers = new Map<string, Listener>();
    const updates: unknown[] = [];
    registerBridgeHandlers({ handle: (channel, listener) => handlers.set(channel, listener) }, () => 'http://127.0.0.1:8501', {
      getApiKey: () => 'the-key',
      getSettings: () => ({ notifications: 'critical', lanAccess: false, lanUrls: [], apiKey: null, slack: { botTokenSet: false, appTokenSet: false, channel: '' } }),
      updateSettings: async (change) => {
        updates.push(change);
        return { notifications: 'off', lanAccess: false, lanUrls: [], apiKey: null, slack: { botTokenSet: false, appTokenSet: false, channel: '' } };
      },
      copyApiKey: () => undefined,
    });
    return { handlers, updates };
  }

  const from = (url: string | null) => ({ senderFrame: url === null ? null : { url } });

  it('registers one named channel per bridge function', () => {
    const { handlers } = register();
    expect([...handlers.keys()].sort()).toEqual([CHANNELS.copyApiKey, CHANNELS.getApiKey, CHANNELS.getSettings, CHANNELS.updateSettings].sort());
  });

  it('answers the dashboard', () => {
    const { handlers } = register();
    expect(handlers.get(CHANNELS.getApiKey)?.(from('http://127.0.0.1:8501/#/queue'))).toBe('the-key');
  });

  it.each(['https://evil.example/', 'http://127.0.0.1:8000/docs', 'file:///tmp/x.html', null])('refuses a call from %s', (url) => {
    const { handlers } = register();
    expect(() => handlers.get(CHANNELS.getApiKey)?.(from(url))).toThrow(/refused IPC/);
  });

  it('passes only a well-formed settings change on', async () => {
    const { handlers, updates } = register();
    await handlers.get(CHANNELS.updateSettings)?.(from('http://127.0.0.1:8501/'), { notifications: 'off' });
    expect(updates).toEqual([{ notifications: 'off' }]);
    expect(() => handlers.get(CHANNELS.updateSettings)?.(from('http://127.0.0.1:8501/'), { lanAccess: 'yes' })).toThrow(/unexpected setting lanAccess/);
  });
});

describe('parseSettingsChange: Slack', () => {
  it('takes Slack tokens and a channel of their kinds, empty to remove one, and nothing else', () => {
    expect(parseSettingsChange({ slack: { botToken: 'xoxb-1-2-abc', appToken: 'xapp-1-A1-abc', channel: 'C0123ABC' } })).toEqual({ slack: { botToken: 'xoxb-1-2-abc', appToken: 'xapp-1-A1-abc', channel: 'C0123ABC' } });
    expect(parseSettingsChange({ slack: { botToken: '' } })).toEqual({ slack: { botToken: '' } });
    for (const slack of [{ botToken: 'xapp-1-A1-abc' }, { appToken: 'xoxb-1-2-abc' }, { channel: '#reviews' }, { signingSecret: 'x' }, { botToken: 1 }, ['x'], 'xoxb-1-2-abc']) {
      expect(() => parseSettingsChange({ slack })).toThrow();
    }
  });
});

describe('parseSettingsChange', () => {
  it.each([null, [], 'lan', { lanAccess: true, apiKey: 'mine' }, { notifications: 'loud' }])('refuses %j', (raw) => {
    expect(() => parseSettingsChange(raw)).toThrow();
  });

  it('accepts the documented fields', () => {
    expect(parseSettingsChange({ lanAccess: true, notifications: 'critical_and_high' })).toEqual({ lanAccess: true, notifications: 'critical_and_high' });
  });
});
