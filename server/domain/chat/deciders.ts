import { DECIDING_ROLES } from '../people/records';
import { userPrincipal } from '../people/sign-in';
import { INSTALLATION, type Principal } from '../shared/principal';
import { type ChatDecider, type ChatDeciders, type ChatPeople, type ChatPerson, type ChatProvider, ChatUnavailable } from './ports';
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

/**
 * A hosted organization's people, behind the chat's users: the person whose `slack_user_id` is
 * the user's, else the active person with the e-mail the chat gives for them. An unmapped user,
 * a deactivated person and a viewer decide nothing; what the workflow allows is the decision's
 * own rule, as in the dashboard.
 */
export class OrganizationChatDeciders implements ChatDeciders {
  constructor(
    private readonly organizationId: number,
    private readonly people: ChatPeople,
    private readonly provider: Pick<ChatProvider, 'resolvePerson'>,
  ) {}

  async deciderOf(user: ChatUser): Promise<ChatDecider> {
    const person = (await this.people.byChatUser(this.organizationId, user.user_id)) ?? (await this.byEmail(user));
    if (person === 'deleted') return { ok: false, reason: 'Your Slack account is deactivated: nothing changed.' };
    if (person === null) {
      return { ok: false, reason: 'Your Slack account is not linked to a person of this organization in Greenlight (an admin can add you with your Slack e-mail, or set your Slack user id): nothing changed.' };
    }
    if (!person.is_active) return { ok: false, reason: 'Your Greenlight account is deactivated: nothing changed.' };
    if (!(DECIDING_ROLES as readonly string[]).includes(person.role)) return { ok: false, reason: `You are a ${person.role} in Greenlight, who reads reviews but cannot decide them: nothing changed.` };
    return { ok: true, principal: userPrincipal(person), reviewer_name: null };
  }

  private async byEmail(user: ChatUser): Promise<ChatPerson | 'deleted' | null> {
    let profile;
    try {
      profile = await this.provider.resolvePerson(user);
    } catch (error) {
      if (error instanceof ChatUnavailable && !error.transient) return null;
      throw error;
    }
    if (profile.deleted) return 'deleted';
    return profile.email ? this.people.byEmail(this.organizationId, profile.email) : null;
  }
}
