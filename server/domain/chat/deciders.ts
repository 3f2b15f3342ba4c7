import { INSTALLATION, type Principal } from '../shared/principal';
import { type ChatDecider, type ChatDeciders, type ChatProvider, ChatUnavailable } from './ports';
import type { ChatUser } from './records';

/**
 * The self-hosted installation's Slack app, as the caller of a decision: the request was
 * authenticated as the app's (Slack's signature, or the socket its app token opened), which
 * holds the installation's authority as its API key does. The person is named in the decision.
 */
export function chatAppPrincipal(user: ChatUser): Principal {
  return { kind: 'api_key', scope: INSTALLATION, id: `slack:${user.team_id ?? ''}:${user.user_id}`, label: `Slack user ${user.user_id}` };
}

/**
 * The self-hosted installation has no people of its own: whoever can click in its channel
 * decides (the channel's members are its reviewers, as the holders of its API key are), under
 * the e-mail Slack gives for them, or their Slack id without one. A deactivated Slack account
 * decides nothing.
 */
export class InstallationChatDeciders implements ChatDeciders {
  constructor(private readonly provider: Pick<ChatProvider, 'resolvePerson'>) {}

  async deciderOf(user: ChatUser): Promise<ChatDecider> {
    let profile;
    try {
      profile = await this.provider.resolvePerson(user);
    } catch (error) {
      if (error instanceof ChatUnavailable && !error.transient) return { ok: false, reason: 'Greenlight could not find your Slack account, so nothing changed.' };
      throw error;
    }
    if (profile.deleted) return { ok: false, reason: 'Your Slack account is deactivated: nothing changed.' };
    return { ok: true, principal: chatAppPrincipal(user), reviewer_name: profile.email ?? `slack:${user.user_id}` };
  }
}
