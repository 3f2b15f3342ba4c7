import { QueryTypes } from 'sequelize';
import { type Database, isUniqueViolation } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { NewSession, NewUser, PeopleRepository, SignInRepository, UserCredentials } from '../domain/people/ports';
import type { TeamMember, TeamRecord, UserRecord, UserRole } from '../domain/people/records';
import type { Tx } from '../domain/shared/unit-of-work';

interface UserRow {
  id: number;
  organization_id: number;
  email: string;
  name: string;
  role: string;
  is_active: boolean | number;
  password_set: boolean | number;
  slack_user_id: string | null;
  created_at: number;
  updated_at: number;
}

interface CredentialsRow extends UserRow {
  password_hash: string | null;
  organization_name: string;
}

interface TeamRow {
  id: number;
  organization_id: number;
  name: string;
  settings: string;
  created_at: number;
}

const USER_COLUMNS = 'id, organization_id, email, name, role, is_active, password_hash IS NOT NULL AS password_set, slack_user_id, created_at, updated_at';

/** A user with what signing in checks, `u` being `users` and `o` their organization. */
const CREDENTIALS_COLUMNS = `u.id, u.organization_id, u.email, u.name, u.role, u.is_active, u.password_hash IS NOT NULL AS password_set, u.slack_user_id,
  u.created_at, u.updated_at, u.password_hash, o.name AS organization_name`;

function toCredentials(row: CredentialsRow): UserCredentials {
  return { user: toUser(row), passwordHash: row.password_hash, organizationName: row.organization_name };
}

function toUser(row: UserRow): UserRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    email: row.email,
    name: row.name,
    role: row.role as UserRole,
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    password_set: Boolean(row.password_set),
    slack_user_id: row.slack_user_id ?? null,
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

export class PeopleStore implements PeopleRepository, SignInRepository {
  constructor(private readonly db: Database) {}

  async insertUser(tx: Tx, user: NewUser): Promise<UserRecord | null> {
    const row = { ...user, is_active: true, updated_at: user.created_at };
    const created = { ...row, password_set: false };
    try {
      const id = await this.db.insertReturningId(
        `INSERT INTO users (organization_id, email, name, role, is_active, created_at, updated_at)
         VALUES ($organization_id, $email, $name, $role, $is_active, $created_at, $updated_at)`,
        row,
        transactionOf(tx),
      );
      return toUser({ id, ...created, slack_user_id: null });
    } catch (error) {
      // Another user of the organization has the address (the unique index says so, also for a race).
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  async listUsers(organizationId: number): Promise<UserRecord[]> {
    return (await organizationRows<UserRow>(this.db, 'users', USER_COLUMNS, organizationId)).map(toUser);
  }

  async findUser(organizationId: number, id: number, tx?: Tx): Promise<UserRecord | null> {
    const [row] = await organizationRows<UserRow>(this.db, 'users', USER_COLUMNS, organizationId, id, tx);
    return row ? toUser(row) : null;
  }

  async updateUser(tx: Tx, organizationId: number, id: number, changes: Partial<Pick<UserRecord, 'name' | 'role' | 'is_active' | 'slack_user_id'>>, now: number): Promise<UserRecord | null> {
    const current = await this.findUser(organizationId, id, tx);
    if (!current) return null;
    const next = { ...current, ...changes };
    await this.db.sequelize.query('UPDATE users SET name = $name, role = $role, is_active = $is_active, slack_user_id = $slack_user_id, updated_at = $now WHERE id = $id', {
      bind: { id, now, name: next.name, role: next.role, is_active: next.is_active, slack_user_id: next.slack_user_id },
      transaction: transactionOf(tx),
    });
    return { ...next, updated_at: isoTime(now) };
  }

  async findBySlackUser(tx: Tx, organizationId: number, slackUserId: string): Promise<UserRecord | null> {
    const [row] = await this.db.sequelize.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE organization_id = $organizationId AND slack_user_id = $slackUserId`, {
      bind: { organizationId, slackUserId },
      type: QueryTypes.SELECT,
      transaction: transactionOf(tx),
    });
    return row ? toUser(row) : null;
  }

  async lockActiveAdmins(tx: Tx, organizationId: number): Promise<number[]> {
    // NO KEY UPDATE, as the update that follows takes: sign-ins that insert sessions referring to these rows go on.
    const lock = this.db.sql.lockRows('no key update');
    const rows = await this.db.sequelize.query<{ id: number }>(
      `SELECT id FROM users WHERE organization_id = $organizationId AND role = 'admin' AND is_active = $active ORDER BY id${lock}`,
      { bind: { organizationId, active: true }, type: QueryTypes.SELECT, transaction: transactionOf(tx) },
    );
    return rows.map((row) => Number(row.id));
  }

  async insertTeam(tx: Tx, team: { organization_id: number; name: string; settings: Record<string, unknown>; created_at: number }): Promise<number> {
    return this.db.insertReturningId(
      'INSERT INTO teams (organization_id, name, settings, created_at) VALUES ($organization_id, $name, $settings, $created_at)',
      { ...team, settings: JSON.stringify(team.settings) },
      transactionOf(tx),
    );
  }

  async listTeams(organizationId: number): Promise<TeamRecord[]> {
    return this.teamsWhere('organization_id = $organizationId', { organizationId });
  }

  async findTeam(organizationId: number, id: number, tx?: Tx): Promise<TeamRecord | null> {
    const [team] = await this.teamsWhere('organization_id = $organizationId AND id = $id', { organizationId, id }, tx);
    return team ?? null;
  }

  async setMember(tx: Tx, teamId: number, userId: number, member: boolean): Promise<boolean> {
    const transaction = transactionOf(tx);
    const bind = { teamId, userId };
    const [existing] = await this.db.sequelize.query('SELECT 1 AS found FROM team_members WHERE team_id = $teamId AND user_id = $userId', { bind, type: QueryTypes.SELECT, transaction });
    if (Boolean(existing) === member) return false;
    const sql = member ? 'INSERT INTO team_members (team_id, user_id) VALUES ($teamId, $userId)' : 'DELETE FROM team_members WHERE team_id = $teamId AND user_id = $userId';
    await this.db.sequelize.query(sql, { bind, transaction });
    return true;
  }

  async teamNamesOf(userId: number): Promise<string[]> {
    const rows = await this.db.sequelize.query<{ name: string }>('SELECT t.name FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = $userId ORDER BY t.id', {
      bind: { userId },
      type: QueryTypes.SELECT,
    });
    return rows.map((row) => row.name);
  }

  async findByEmail(email: string): Promise<UserCredentials[]> {
    return this.credentialsWhere('u.email = $email AND u.is_active = $active', { email, active: true });
  }

  async findByInvitation(tokenHash: string, now: number): Promise<UserCredentials | null> {
    const [found] = await this.credentialsWhere('u.invitation_hash = $tokenHash AND u.invitation_expires_at > $now AND u.is_active = $active', { tokenHash, now, active: true });
    return found ?? null;
  }

  async setInvitation(tx: Tx, userId: number, tokenHash: string, expiresAt: number): Promise<void> {
    await this.db.sequelize.query('UPDATE users SET invitation_hash = $tokenHash, invitation_expires_at = $expiresAt WHERE id = $userId', {
      bind: { userId, tokenHash, expiresAt },
      transaction: transactionOf(tx),
    });
  }

  async setPassword(tx: Tx, userId: number, passwordHash: string, now: number): Promise<void> {
    await this.db.sequelize.query('UPDATE users SET password_hash = $passwordHash, invitation_hash = NULL, invitation_expires_at = NULL, updated_at = $now WHERE id = $userId', {
      bind: { userId, passwordHash, now },
      transaction: transactionOf(tx),
    });
  }

  async insertSession(tx: Tx, session: NewSession): Promise<void> {
    await this.db.sequelize.query('INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($token_hash, $user_id, $created_at, $expires_at)', {
      bind: { ...session },
      transaction: transactionOf(tx),
    });
  }

  async findSession(tokenHash: string, now: number): Promise<(UserCredentials & { expiresAt: number }) | null> {
    const rows = await this.db.sequelize.query<CredentialsRow & { expires_at: number }>(
      `SELECT ${CREDENTIALS_COLUMNS}, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id JOIN organizations o ON o.id = u.organization_id
       WHERE s.token_hash = $tokenHash AND s.expires_at > $now AND u.is_active = $active`,
      { bind: { tokenHash, now, active: true }, type: QueryTypes.SELECT },
    );
    return rows[0] ? { ...toCredentials(rows[0]), expiresAt: Number(rows[0].expires_at) } : null;
  }

  async deleteSession(tx: Tx, tokenHash: string): Promise<void> {
    await this.db.sequelize.query('DELETE FROM sessions WHERE token_hash = $tokenHash', { bind: { tokenHash }, transaction: transactionOf(tx) });
  }

  async deleteSessionsOf(tx: Tx, userId: number): Promise<void> {
    await this.db.sequelize.query('DELETE FROM sessions WHERE user_id = $userId', { bind: { userId }, transaction: transactionOf(tx) });
  }

  async deleteExpiredSessions(tx: Tx, userId: number, now: number): Promise<void> {
    await this.db.sequelize.query('DELETE FROM sessions WHERE user_id = $userId AND expires_at <= $now', { bind: { userId, now }, transaction: transactionOf(tx) });
  }

  private async credentialsWhere(condition: string, bind: Record<string, unknown>): Promise<UserCredentials[]> {
    const rows = await this.db.sequelize.query<CredentialsRow>(
      `SELECT ${CREDENTIALS_COLUMNS} FROM users u JOIN organizations o ON o.id = u.organization_id WHERE ${condition} ORDER BY u.id`,
      { bind, type: QueryTypes.SELECT },
    );
    return rows.map(toCredentials);
  }

  /** Teams with their members, in two queries whatever their number. */
  private async teamsWhere(condition: string, bind: Record<string, unknown>, tx?: Tx): Promise<TeamRecord[]> {
    const transaction = tx ? transactionOf(tx) : undefined;
    const rows = await this.db.sequelize.query<TeamRow>(`SELECT id, organization_id, name, settings, created_at FROM teams WHERE ${condition} ORDER BY id`, {
      bind,
      type: QueryTypes.SELECT,
      transaction,
    });
    if (rows.length === 0) return [];
    const members = await this.db.sequelize.query<TeamMember & { team_id: number }>(
      'SELECT m.team_id, u.id, u.email, u.name, u.role FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id IN (:teamIds) ORDER BY u.id',
      { replacements: { teamIds: rows.map((row) => row.id) }, type: QueryTypes.SELECT, transaction },
    );
    return rows.map((row) => ({
      id: Number(row.id),
      organization_id: Number(row.organization_id),
      name: row.name,
      members: members
        .filter((member) => Number(member.team_id) === Number(row.id))
        .map(({ id, email, name, role }) => ({ id: Number(id), email, name, role })),
      settings: JSON.parse(row.settings) as Record<string, unknown>,
      created_at: isoTime(Number(row.created_at)),
    }));
  }
}
