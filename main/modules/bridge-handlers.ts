import os from 'node:os';
import { CHANNELS, type DesktopSettingsChange, type DesktopSettingsView, type DesktopSlackChange } from '../bridge';
import type { DesktopModule } from './desktop-module';
import { settingsView, SLACK_PATTERNS } from './desktop-settings';
import type { IpcMainLike } from './electron-parts';
import { sameOrigin } from './window-security';

export interface BridgeHandlers {
  getApiKey(): string | null;
  getSettings(): DesktopSettingsView;
  updateSettings(change: DesktopSettingsChange): Promise<DesktopSettingsView>;
  copyApiKey(): void;
}

const NOTIFICATION_LEVELS = new Set(['off', 'critical', 'critical_and_high']);

/** Accepts exactly the documented shape, nothing more; anything else is a programming error or an attack. */
export function parseSettingsChange(raw: unknown): DesktopSettingsChange {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('settings change must be an object');
  const change: DesktopSettingsChange = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'notifications' && typeof value === 'string' && NOTIFICATION_LEVELS.has(value)) {
      change.notifications = value as DesktopSettingsChange['notifications'];
    } else if (key === 'lanAccess' && typeof value === 'boolean') {
      change.lanAccess = value;
    } else if (key === 'slack' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      change.slack = parseSlackChange(value as Record<string, unknown>);
    } else {
      throw new Error(`unexpected setting ${key}`);
    }
  }
  return change;
}

function parseSlackChange(raw: Record<string, unknown>): DesktopSlackChange {
  const change: DesktopSlackChange = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(key in SLACK_PATTERNS) || typeof value !== 'string' || !SLACK_PATTERNS[key as keyof DesktopSlackChange].test(value.trim())) throw new Error(`unexpected Slack setting ${key}`);
    change[key as keyof DesktopSlackChange] = value.trim();
  }
  return change;
}

/**
 * One named handler per bridge function. Each refuses callers that are not the dashboard
 * (its origin), whatever a compromised page or a stray frame might send.
 */
export function registerBridgeHandlers(ipcMain: IpcMainLike, trustedOrigin: () => string, handlers: BridgeHandlers): void {
  const guarded =
    <T>(handler: (...args: unknown[]) => T) =>
    (event: { senderFrame: { url: string } | null }, ...args: unknown[]): T => {
      const url = event.senderFrame?.url ?? '';
      if (!sameOrigin(url, trustedOrigin())) throw new Error(`refused IPC from ${url || 'an unknown frame'}`);
      return handler(...args);
    };
  ipcMain.handle(CHANNELS.getApiKey, guarded(() => handlers.getApiKey()));
  ipcMain.handle(CHANNELS.getSettings, guarded(() => handlers.getSettings()));
  ipcMain.handle(CHANNELS.updateSettings, guarded((change) => handlers.updateSettings(parseSettingsChange(change))));
  ipcMain.handle(CHANNELS.copyApiKey, guarded(() => handlers.copyApiKey()));
}

/** The dashboard's bridge to the shell, answering from the running API's configuration and the desktop settings. */
export const bridge: DesktopModule = {
  enable({ electron: { ipcMain, clipboard }, servers, settings }) {
    const dashboardOrigin = new URL(servers.dashboardUrl).origin;
    const view = (): DesktopSettingsView => settingsView(settings.current, os.networkInterfaces(), servers.config.api_port);
    registerBridgeHandlers(ipcMain, () => dashboardOrigin, {
      getApiKey: () => (servers.config.enable_auth ? servers.config.api_key : null),
      getSettings: view,
      updateSettings: async (change) => {
        await settings.update(change);
        return view();
      },
      copyApiKey: () => {
        if (settings.current.lanApiKey) clipboard.writeText(settings.current.lanApiKey);
      },
    });
  },
};
