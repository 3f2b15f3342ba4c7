/**
 * The contract between the desktop shell and the dashboard: what the preload script puts on
 * `window.greenlight`. Types only; the renderer imports them without pulling in any code.
 */

export type NotificationLevel = 'off' | 'critical' | 'critical_and_high';

/** What the dashboard's desktop settings show. */
/** Reviews in Slack over Socket Mode: whether the tokens are set (never the tokens themselves), and the channel. */
export interface DesktopSlackView {
  botTokenSet: boolean;
  appTokenSet: boolean;
  channel: string;
}

/** New Slack tokens or channel; an empty string removes one. */
export interface DesktopSlackChange {
  botToken?: string;
  appToken?: string;
  channel?: string;
}

export interface DesktopSettingsView {
  notifications: NotificationLevel;
  slack: DesktopSlackView;
  lanAccess: boolean;
  /** Addresses agents on the network use while LAN access is on. */
  lanUrls: string[];
  /** The API key agents must send while LAN access is on. */
  apiKey: string | null;
}

export interface DesktopSettingsChange {
  notifications?: NotificationLevel;
  lanAccess?: boolean;
  slack?: DesktopSlackChange;
}

export interface DesktopBridge {
  readonly desktop: true;
  /** The key the dashboard needs when the API requires one (LAN access on). */
  getApiKey(): Promise<string | null>;
  getSettings(): Promise<DesktopSettingsView>;
  updateSettings(change: DesktopSettingsChange): Promise<DesktopSettingsView>;
  copyApiKey(): Promise<void>;
  /** A native notification was clicked: show that review. */
  onOpenReview(listener: (reviewId: number) => void): void;
}

/** IPC channel names, one per bridge function; never a generic channel. */
export const CHANNELS = {
  getApiKey: 'greenlight:get-api-key',
  getSettings: 'greenlight:get-settings',
  updateSettings: 'greenlight:update-settings',
  copyApiKey: 'greenlight:copy-api-key',
  openReview: 'greenlight:open-review',
} as const;
