import { QueryTypes } from 'sequelize';
import type { ChatInstallationRepository, ChatPeople, ChatPerson, StoredChatInstallation } from '../domain/chat/ports';
import type { Tx } from '../domain/shared/unit-of-work';
import type { Database } from './database';
import { transactionOf } from './unit-of-work';

const COLUMNS = 'organization_id, team_id, team_name, bot_user_id, app_id, scopes, channel_id, token_ciphertext, status, created_at, updated_at';

function installationOf(row: StoredChatInstallation): StoredChatInstallation {
  return { ...row, organization_id: Number(row.organization_id), created_at: Number(row.created_at), updated_at: Number(row.updated_at) };
}

/** Hosted organizations' Slack workspaces (`slack_installations`) and installs under way (`slack_oauth_states`). */
export class SlackInstallationStore implements ChatInstallationRepository, ChatPeople {
  constructor(private readonly db: Database) {}

  async saveState(tx: Tx, stateHash: string, organizationId: number, startedBy: string, expiresAt: number): Promise<void> {
    await this.db.sequelize.query('INSERT INTO slack_oauth_states (state_hash, organization_id, started_by, expires_at) VALUES ($stateHash, $organizationId, $startedBy, $expiresAt)', {
      bind: { stateHash, organizationId, startedBy: startedBy.slice(0, 200), expiresAt },
      transaction: transactionOf(tx),
    });
  }

  async takeState(tx: Tx, stateHash: string, now: number): Promise<{ organization_id: number; started_by: string } | null> {
    const transaction = transactionOf(tx);
    // Deleted whether or not it is still good: a state is used once, and an expired one never.
    const rows = await this.db.sequelize.query<{ organization_id: number; started_by: string; expires_at: number }>(
      'DELETE FROM slack_oauth_states WHERE state_hash = $stateHash RETURNING organization_id, started_by, expires_at',
      { bind: { stateHash }, type: QueryTypes.SELECT, transaction },
    );
    await this.db.sequelize.query('DELETE FROM slack_oauth_states WHERE expires_at < $now', { bind: { now }, transaction });
    const [row] = rows;
    if (!row || Number(row.expires_at) < now) return null;
    return { organization_id: Number(row.organization_id), started_by: row.started_by };
  }

  async save(tx: Tx, installation: StoredChatInstallation): Promise<void> {
    const transaction = transactionOf(tx);
    await this.db.sequelize.query('DELETE FROM slack_installations WHERE organization_id = $organization_id', { bind: { organization_id: installation.organization_id }, transaction });
    await this.db.sequelize.query(
      `INSERT INTO slack_installations (${COLUMNS}) VALUES ($organization_id, $team_id, $team_name, $bot_user_id, $app_id, $scopes, $channel_id, $token_ciphertext, $status, $created_at, $updated_at)`,
      { bind: { ...installation }, transaction },
    );
  }

  async find(organizationId: number, tx?: Tx): Promise<StoredChatInstallation | null> {
    const [row] = await this.db.sequelize.query<StoredChatInstallation>(`SELECT ${COLUMNS} FROM slack_installations WHERE organization_id = $organizationId`, {
      bind: { organizationId },
      type: QueryTypes.SELECT,
      transaction: tx ? transactionOf(tx) : undefined,
    });
    return row ? installationOf(row) : null;
  }

  async setChannel(tx: Tx, organizationId: number, channelId: string | null, now: number): Promise<void> {
    await this.db.sequelize.query('UPDATE slack_installations SET channel_id = $channelId, updated_at = $now WHERE organization_id = $organizationId', {
      bind: { organizationId, channelId, now },
      transaction: transactionOf(tx),
    });
  }

  async delete(tx: Tx, organizationId: number): Promise<void> {
    await this.db.sequelize.query('DELETE FROM slack_installations WHERE organization_id = $organizationId', { bind: { organizationId }, transaction: transactionOf(tx) });
  }

  async byChatUser(organizationId: number, chatUserId: string): Promise<ChatPerson | null> {
    return this.personWhere('organization_id = $organizationId AND slack_user_id = $chatUserId', { organizationId, chatUserId });
  }

  async byEmail(organizationId: number, email: string): Promise<ChatPerson | null> {
    return this.personWhere('organization_id = $organizationId AND LOWER(email) = LOWER($email)', { organizationId, email });
  }

  private async personWhere(condition: string, bind: Record<string, unknown>): Promise<ChatPerson | null> {
    const [row] = await this.db.sequelize.query<ChatPerson>(`SELECT id, organization_id, email, name, role, is_active FROM users WHERE ${condition}`, { bind, type: QueryTypes.SELECT });
    return row ? { ...row, id: Number(row.id), organization_id: Number(row.organization_id), is_active: Boolean(row.is_active) } : null;
  }

  async revokeTeam(tx: Tx, teamId: string, now: number): Promise<number[]> {
    const rows = await this.db.sequelize.query<{ organization_id: number }>(
      "UPDATE slack_installations SET status = 'revoked', token_ciphertext = NULL, updated_at = $now WHERE team_id = $teamId AND status = 'active' RETURNING organization_id",
      { bind: { teamId, now }, type: QueryTypes.SELECT, transaction: transactionOf(tx) },
    );
    return rows.map((row) => Number(row.organization_id));
  }
}
