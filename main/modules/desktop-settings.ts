import fs from 'node:fs';
import type { NetworkInterfaceInfo } from 'node:os';
import path from 'node:path';
import type { DesktopSettingsChange, DesktopSettingsView, DesktopSlackChange, NotificationLevel } from '../bridge';

/** What the desktop app remembers beyond greenlight.yaml: choices made in its own settings. */
export interface DesktopSettings {
  notifications: NotificationLevel;
  lanAccess: boolean;
  /** Generated the first time LAN access is turned on; kept so agents need not be reconfigured. */
  lanApiKey: string | null;
  /** Reviews in Slack over Socket Mode (the app from `greenlight slack manifest`): its tokens and channel. */
  slack: { botToken: string; appToken: string; channel: string };
}

export const DEFAULT_SETTINGS: DesktopSettings = { notifications: 'critical', lanAccess: false, lanApiKey: null, slack: { botToken: '', appToken: '', channel: '' } };

/** What each Slack setting must look like (empty removes it): as `server/config/settings.ts` checks them. */
export const SLACK_PATTERNS: Record<keyof DesktopSlackChange, RegExp> = {
  botToken: /^(xoxb-[A-Za-z0-9-]{5,250})?$/,
  appToken: /^(xapp-[A-Za-z0-9-]{5,250})?$/,
  channel: /^([CGD][A-Z0-9]{2,40})?$/,
};

function slackOf(raw: unknown): DesktopSettings['slack'] {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const field = (name: keyof DesktopSlackChange) => (typeof value[name] === 'string' && SLACK_PATTERNS[name].test(value[name] as string) ? (value[name] as string) : '');
  return { botToken: field('botToken'), appToken: field('appToken'), channel: field('channel') };
}

const LEVELS: readonly NotificationLevel[] = ['off', 'critical', 'critical_and_high'];

/** A damaged or hand-edited file falls back, field by field, to the defaults. */
export function parseSettings(raw: unknown): DesktopSettings {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    notifications: LEVELS.includes(value.notifications as NotificationLevel) ? (value.notifications as NotificationLevel) : DEFAULT_SETTINGS.notifications,
    lanAccess: value.lanAccess === true,
    lanApiKey: typeof value.lanApiKey === 'string' && value.lanApiKey.length >= 16 ? value.lanApiKey : null,
    slack: slackOf(value.slack),
  };
}

export function readSettings(file: string): DesktopSettings {
  try {
    return parseSettings(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function writeSettings(file: string, settings: DesktopSettings): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // The file holds the LAN API key and the Slack tokens: readable by its owner only.
  fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Applies a change from the settings screen. Turning LAN access on also turns the API key on
 * (generating one the first time), because the API then answers the whole network.
 */
export function changeSettings(current: DesktopSettings, change: DesktopSettingsChange, newKey: () => string): DesktopSettings {
  const next = { ...current };
  if (change.notifications !== undefined) {
    if (!LEVELS.includes(change.notifications)) throw new Error(`unknown notification level ${String(change.notifications)}`);
    next.notifications = change.notifications;
  }
  if (change.lanAccess !== undefined) {
    next.lanAccess = change.lanAccess === true;
    if (next.lanAccess && !next.lanApiKey) next.lanApiKey = newKey();
  }
  if (change.slack !== undefined) {
    const slack = { ...current.slack };
    for (const name of ['botToken', 'appToken', 'channel'] as const) {
      const value = change.slack[name];
      if (value === undefined) continue;
      if (typeof value !== 'string' || !SLACK_PATTERNS[name].test(value.trim())) throw new Error(`${name} is not a Slack ${name === 'channel' ? 'channel id' : 'token of its kind'}`);
      slack[name] = value.trim();
    }
    next.slack = slack;
  }
  return next;
}

/** The configuration the desktop settings impose, over greenlight.yaml and the environment: the network, and Slack once set here. */
export function configOverrides(settings: DesktopSettings): Record<string, string | boolean> {
  const { botToken, appToken, channel } = settings.slack;
  const slack: Record<string, string> = botToken ? { slack_bot_token: botToken, slack_app_token: appToken, slack_channel: channel } : {};
  if (!settings.lanAccess || !settings.lanApiKey) return { api_host: '127.0.0.1', ...slack };
  return { api_host: '0.0.0.0', enable_auth: true, api_key: settings.lanApiKey, ...slack };
}

/** Whether the API must restart for a change: it binds its address, and opens Slack's socket, at start. */
export function needsRestart(before: DesktopSettings, after: DesktopSettings): boolean {
  return before.lanAccess !== after.lanAccess || JSON.stringify(before.slack) !== JSON.stringify(after.slack);
}

/** What the dashboard's settings show, the LAN addresses and key only while LAN access is on. */
export function settingsView(settings: DesktopSettings, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, apiPort: number): DesktopSettingsView {
  return {
    notifications: settings.notifications,
    lanAccess: settings.lanAccess,
    lanUrls: settings.lanAccess ? lanUrls(interfaces, apiPort) : [],
    apiKey: settings.lanAccess ? settings.lanApiKey : null,
    slack: { botTokenSet: settings.slack.botToken !== '', appTokenSet: settings.slack.appToken !== '', channel: settings.slack.channel },
  };
}

/** The API's address on each IPv4 network this machine is on. */
export function lanUrls(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, port: number): string[] {
  return Object.values(interfaces)
    .flatMap((addresses) => addresses ?? [])
    .filter((address) => address.family === 'IPv4' && !address.internal)
    .map((address) => `http://${address.address}:${port}`);
}

type SettingsListener = (before: DesktopSettings, after: DesktopSettings) => void | Promise<void>;

/** The settings the app runs with: read at start, saved on every change, each change announced. */
export class SettingsStore {
  private settings: DesktopSettings;
  private readonly listeners: SettingsListener[] = [];

  constructor(
    private readonly file: string,
    private readonly newKey: () => string,
  ) {
    this.settings = readSettings(file);
  }

  get current(): DesktopSettings {
    return this.settings;
  }

  /** Listeners are awaited in turn, so a change has taken effect (the API restarted) when `update` returns. */
  onChange(listener: SettingsListener): void {
    this.listeners.push(listener);
  }

  async update(change: DesktopSettingsChange): Promise<DesktopSettings> {
    const before = this.settings;
    this.settings = changeSettings(before, change, this.newKey);
    writeSettings(this.file, this.settings);
    for (const listener of this.listeners) await listener(before, this.settings);
    return this.settings;
  }
}
