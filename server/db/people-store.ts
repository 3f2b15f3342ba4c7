import { QueryTypes } from 'sequelize';
import { type Database, isUniqueViolation } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { NewUser, PeopleRepository, TeamMember, TeamRecord, Tx, UserRecord, UserRole } from '../domain/ports';

interface UserRow {
  id: number;
  organization_id: number;
  email: string;
  name: string;
  role: string;
  is_active: boolean | number;
  created_at: number;
  updated_at: number;
}

interface TeamRow {
  id: number;
  organization_id: number;
  name: string;
  settings: string;
  created_at: number;
}

const USER_COLUMNS = 'id, organization_id, email, name, role, is_active, created_at, updated_at';

function toUser(row: UserRow): UserRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    email: row.email,
    name: row.name,
    role: row.role as UserRole,
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

export class PeopleStore implements PeopleRepository {
  constructor(private readonly db: Database) {}

  async insertUser(tx: Tx, user: NewUser): Promise<UserRecord | null> {
    const row = { ...user, is_active: true, updated_at: user.created_at };
    try {
      const id = await this.db.insertReturningId(
        `INSERT INTO users (organization_id, email, name, role, is_active, created_at, updated_at)
         VALUES ($organization_id, $email, $name, $role, $is_active, $created_at, $updated_at)`,
        row,
        transactionOf(tx),
      );
      return toUser({ id, ...row });
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

  async updateUser(tx: Tx, organizationId: number, id: number, changes: Partial<Pick<UserRecord, 'name' | 'role' | 'is_active'>>, now: number): Promise<UserRecord | null> {
    const current = await this.findUser(organizationId, id, tx);
    if (!current) return null;
    const next = { ...current, ...changes };
    await this.db.sequelize.query('UPDATE users SET name = $name, role = $role, is_active = $is_active, updated_at = $now WHERE id = $id', {
      bind: { id, now, name: next.name, role: next.role, is_active: next.is_active },
      transaction: transactionOf(tx),
    });
    return { ...next, updated_at: isoTime(now) };
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
