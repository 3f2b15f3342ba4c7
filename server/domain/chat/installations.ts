import { createHash, randomBytes } from 'node:crypto';
import { AppError, invalidInput } from '../shared/errors';
import type { Principal } from '../shared/principal';
import { organizationOfCaller } from '../shared/scope';
import { type Clock, type Log, SYSTEM, type Tx, type UnitOfWork } from '../shared/unit-of-work';
import { type ChatInstallationRepository, type ChatOAuth, ChatUnavailable, type SecretSealer, type StoredChatInstallation } from './ports';
import type { ChatInstallationRecord } from './records';

/** How long an install may take between "Add to Slack" and Slack's redirect back. */
export const STATE_TTL_MS = 10 * 60_000;

const CHANNEL = /^[CGD][A-Z0-9]{2,40}$/;

function hashOf(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** What seals a token: the organization it belongs to, so a sealed token moved to another row does not open. */
function tokenContext(organizationId: number): string {
  return `slack-bot-token:organization:${organizationId}`;
}

function recordOf(stored: StoredChatInstallation): ChatInstallationRecord {
  return {
    provider: 'slack',
    team: { id: stored.team_id, name: stored.team_name },
    bot_user_id: stored.bot_user_id,
    scopes: stored.scopes === '' ? [] : stored.scopes.split(','),
    channel_id: stored.channel_id,
    status: stored.status,
    installed_at: new Date(stored.created_at).toISOString(),
    updated_at: new Date(stored.updated_at).toISOString(),
  };
}

export interface ChatInstallationsOptions {
  installations: ChatInstallationRepository;
  /** Null when the server has no app credentials (`slack_client_id`, `slack_client_secret`, `slack_token_key`). */
  oauth: ChatOAuth | null;
  sealer: SecretSealer | null;
  unitOfWork: UnitOfWork;
  log: Log;
  clock: Clock;
}

/**
 * A hosted organization's Slack workspace: installed by an admin with OAuth v2 (a random,
 * single-use `state` bound to the organization and the admin, ten minutes to come back), its
 * bot token sealed at rest, a channel chosen, uninstalled with the token revoked. Each change
 * is in the organization's audit log.
 */
export class ChatInstallations {
  constructor(private readonly options: ChatInstallationsOptions) {}

  private configured(): { oauth: ChatOAuth; sealer: SecretSealer } {
    const { oauth, sealer } = this.options;
    if (!oauth || !sealer) throw new AppError(409, 'this server cannot install Slack: its operator has not set slack_client_id, slack_client_secret and slack_token_key');
    return { oauth, sealer };
  }

  /** Where the admin goes to authorize the app. */
  async start(principal: Principal): Promise<{ authorize_url: string }> {
    const organizationId = organizationOfCaller(principal);
    const { oauth } = this.configured();
    const state = randomBytes(32).toString('base64url');
    const now = this.options.clock();
    await this.options.unitOfWork.run((tx) => this.options.installations.saveState(tx, hashOf(state), organizationId, principal.id || principal.label || 'admin', now + STATE_TTL_MS), { by: principal });
    return { authorize_url: oauth.authorizeUrl(state) };
  }

  /**
   * Slack's redirect back: the state is taken (so a replay finds nothing) before the code is
   * exchanged; the organization is the state's, never one the request names. Answers the
   * organization the workspace was installed for. The redirect carries no caller: the install
   * is the system's in the audit log, which names the admin who started it.
   */
  async complete(code: string, state: string): Promise<number> {
    const { oauth, sealer } = this.configured();
    const now = this.options.clock();
    const begun = await this.options.unitOfWork.run((tx) => this.options.installations.takeState(tx, hashOf(state), now), { by: SYSTEM });
    if (begun === null) throw new AppError(400, 'this Slack install link is unknown, used or expired: start again with Add to Slack');
    let grant;
    try {
      grant = await oauth.exchange(code);
    } catch (error) {
      if (error instanceof ChatUnavailable) throw new AppError(502, `Slack did not complete the install: ${error.message}`);
      throw error;
    }
    const organizationId = begun.organization_id;
    await this.options.unitOfWork.run(async (tx) => {
      const previous = await this.options.installations.find(organizationId, tx);
      await this.options.installations.save(tx, {
        organization_id: organizationId,
        team_id: grant.team.id,
        team_name: grant.team.name,
        bot_user_id: grant.bot_user_id,
        app_id: grant.app_id,
        scopes: grant.scopes.join(','),
        channel_id: previous?.team_id === grant.team.id ? previous.channel_id : null,
        token_ciphertext: sealer.seal(grant.token, tokenContext(organizationId)),
        status: 'active',
        created_at: now,
        updated_at: now,
      });
      tx.audit({ organization_id: organizationId, action: 'slack.installed', target_type: 'slack', target_id: null, data: { team_id: grant.team.id, team_name: grant.team.name, started_by: begun.started_by } });
    }, { by: SYSTEM });
    return organizationId;
  }

  async status(principal: Principal): Promise<ChatInstallationRecord> {
    return recordOf(await this.installed(organizationOfCaller(principal)));
  }

  async setChannel(principal: Principal, channelId: string | null): Promise<ChatInstallationRecord> {
    const organizationId = organizationOfCaller(principal);
    if (channelId !== null && !CHANNEL.test(channelId)) throw invalidInput('channel_id', 'must be a Slack channel id such as C0123456789 (the channel\'s About tab, at the bottom)');
    const now = this.options.clock();
    await this.options.unitOfWork.run(async (tx) => {
      const current = await this.options.installations.find(organizationId, tx);
      if (!current) throw new AppError(404, 'Slack is not installed for this organization');
      await this.options.installations.setChannel(tx, organizationId, channelId, now);
      tx.audit({ organization_id: organizationId, action: 'slack.channel_changed', target_type: 'slack', target_id: null, data: { from: current.channel_id, to: channelId } });
    }, { by: principal });
    return this.status(principal);
  }

  /** Revokes the token at Slack (best effort: an unreachable Slack does not keep it stored here), then forgets it. */
  async uninstall(principal: Principal): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    const current = await this.installed(organizationId);
    if (current.token_ciphertext && this.options.oauth && this.options.sealer) {
      try {
        await this.options.oauth.revoke(this.options.sealer.open(current.token_ciphertext, tokenContext(organizationId)));
      } catch (error) {
        this.options.log.error('could not revoke the Slack token at Slack; it is deleted here all the same', { organization_id: organizationId, error: String(error) });
      }
    }
    await this.options.unitOfWork.run(async (tx) => {
      await this.options.installations.delete(tx, organizationId);
      tx.audit({ organization_id: organizationId, action: 'slack.uninstalled', target_type: 'slack', target_id: null, data: { team_id: current.team_id } });
    }, { by: principal });
  }

  /** Slack said the app was uninstalled from a workspace, or its tokens revoked. */
  async revokedBySlack(teamId: string): Promise<void> {
    const now = this.options.clock();
    await this.options.unitOfWork.run(async (tx) => {
      for (const organizationId of await this.options.installations.revokeTeam(tx, teamId, now)) {
        tx.audit({ organization_id: organizationId, action: 'slack.revoked', target_type: 'slack', target_id: null, data: { team_id: teamId } });
      }
    }, { by: SYSTEM });
  }

  /** The organization's channel and bot token, when it has an active installation with a channel. */
  async postingFor(organizationId: number, tx?: Tx): Promise<{ channel: string; token: string } | null> {
    const current = await this.options.installations.find(organizationId, tx);
    if (!current || current.status !== 'active' || !current.channel_id || !current.token_ciphertext || !this.options.sealer) return null;
    return { channel: current.channel_id, token: this.options.sealer.open(current.token_ciphertext, tokenContext(organizationId)) };
  }

  /** The organization's workspace and bot token, when its installation is active: what answering its clicks needs. */
  async accessFor(organizationId: number): Promise<{ team_id: string; token: string } | null> {
    const current = await this.options.installations.find(organizationId);
    if (!current || current.status !== 'active' || !current.token_ciphertext || !this.options.sealer) return null;
    return { team_id: current.team_id, token: this.options.sealer.open(current.token_ciphertext, tokenContext(organizationId)) };
  }

  private async installed(organizationId: number): Promise<StoredChatInstallation> {
    const current = await this.options.installations.find(organizationId);
    if (!current) throw new AppError(404, 'Slack is not installed for this organization');
    return current;
  }
}
