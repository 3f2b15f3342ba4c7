/** What the Slack app needs and no more: post and update messages, DM, read who clicked and their e-mail. */
export const BOT_SCOPES = ['chat:write', 'im:write', 'users:read', 'users:read.email'] as const;

export interface ManifestOptions {
  /** The app's and its bot's name in Slack. */
  name: string;
  /**
   * Where Slack reaches this API over HTTP (`…/integrations/slack/interactions`, `…/events`);
   * without it, Socket Mode: the server opens the connection, and no public URL is needed.
   */
  publicApiUrl?: string;
}

/**
 * The app manifest to paste into Slack ("Create New App" → "From a manifest"): the bot's scopes,
 * interactivity, and the two events that say the app was removed.
 */
export function slackManifest({ name, publicApiUrl }: ManifestOptions): Record<string, unknown> {
  const base = publicApiUrl?.replace(/\/+$/, '');
  return {
    _metadata: { major_version: 1, minor_version: 1 },
    display_information: {
      name,
      description: 'Approve, reject or modify what AI agents propose, from the channel.',
      background_color: '#1f6f43',
    },
    features: { bot_user: { display_name: name, always_online: true } },
    // Over HTTP, the hosted edition's Add to Slack comes back to its callback.
    oauth_config: { ...(base ? { redirect_urls: [`${base}/integrations/slack/oauth/callback`] } : {}), scopes: { bot: [...BOT_SCOPES] } },
    settings: {
      event_subscriptions: { ...(base ? { request_url: `${base}/integrations/slack/events` } : {}), bot_events: ['app_uninstalled', 'tokens_revoked'] },
      interactivity: { is_enabled: true, ...(base ? { request_url: `${base}/integrations/slack/interactions` } : {}) },
      org_deploy_enabled: false,
      socket_mode_enabled: base === undefined,
      token_rotation_enabled: false,
    },
  };
}
