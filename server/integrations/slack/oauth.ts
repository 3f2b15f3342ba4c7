import type { ChatOAuth } from '../../domain/chat/ports';
import type { ChatGrant } from '../../domain/chat/records';
import { BOT_SCOPES } from './manifest';
import { SlackWebApi } from './web-api';

export interface SlackOAuthOptions {
  apiUrl: string;
  /** `slack_oauth_url`: Slack's authorize page. */
  authorizeUrl: string;
  clientId: string;
  clientSecret: string;
  /** Where Slack sends the installer back: this API's callback as the installer's browser reaches it. */
  redirectUri: string;
}

/** Slack's OAuth v2: the authorize URL (parameters as Slack's SDKs write them), the code exchanged with HTTP Basic, `auth.revoke`. */
export class SlackOAuth implements ChatOAuth {
  constructor(private readonly options: SlackOAuthOptions) {}

  authorizeUrl(state: string): string {
    const url = new URL(this.options.authorizeUrl);
    url.search = new URLSearchParams({ client_id: this.options.clientId, scope: BOT_SCOPES.join(','), user_scope: '', redirect_uri: this.options.redirectUri, state }).toString();
    return url.toString();
  }

  async exchange(code: string): Promise<ChatGrant> {
    const api = new SlackWebApi(this.options.apiUrl, () => '');
    const answer = await api.callWithBasic('oauth.v2.access', this.options.clientId, this.options.clientSecret, { code, redirect_uri: this.options.redirectUri });
    const team = (answer.team ?? {}) as { id?: string; name?: string };
    if (typeof answer.access_token !== 'string' || typeof team.id !== 'string') throw new Error('oauth.v2.access gave no bot token or team');
    return {
      token: answer.access_token,
      team: { id: team.id, name: team.name ?? null },
      bot_user_id: typeof answer.bot_user_id === 'string' ? answer.bot_user_id : null,
      app_id: typeof answer.app_id === 'string' ? answer.app_id : null,
      scopes: typeof answer.scope === 'string' && answer.scope !== '' ? answer.scope.split(',') : [],
    };
  }

  async revoke(token: string): Promise<void> {
    await new SlackWebApi(this.options.apiUrl, () => token).call('auth.revoke', {});
  }
}
