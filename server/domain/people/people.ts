import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { PeopleRepository, SignInRepository } from './ports';
import type { Principal } from '../shared/principal';
import type { TeamRecord, UserRecord, UserRole } from './records';
import { organizationOf, organizationOfCaller } from '../shared/scope';
import { type Invitations, userPrincipalId } from './sign-in';

export interface UserInput {
  email: string;
  name: string;
  role: UserRole;
  organization_id?: number | null;
}

/** A user just added, with the link that lets them set a password: in this answer only. */
export type InvitedUser = UserRecord & { invitation_url: string; invitation_expires_at: string };

export type UserChanges = Partial<Pick<UserRecord, 'name' | 'role' | 'is_active' | 'slack_user_id'>>;

export interface TeamInput {
  name: string;
  organization_id?: number | null;
  member_ids?: number[];
  settings?: Record<string, unknown>;
}

/** An address as people type it, and as stored: trimmed, in lower case. */
function normalEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normal)) throw invalidInput('email', 'must be an e-mail address');
  return normal;
}

/** The people of an organization (hosted edition) and the teams they form. */
export class PeopleService {
  constructor(
    private readonly people: PeopleRepository,
    private readonly accounts: SignInRepository,
    private readonly invitations: Invitations,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async createUser(principal: Principal, input: UserInput): Promise<InvitedUser> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const user = { organization_id: organizationId, email: normalEmail(input.email), name: input.name, role: input.role, created_at: this.clock() };
    return this.unitOfWork.run(async (tx) => {
      const created = await this.people.insertUser(tx, user);
      if (!created) throw new AppError(409, `the organization already has a user with the e-mail ${user.email}`);
      // A new person may vote in the organization's workflows: what its creates read of them changed.
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'user.created', target_type: 'user', target_id: created.id, data: { email: created.email, role: created.role } });
      return { ...created, ...(await this.invitations.issue(tx, created.id)) };
    }, { by: principal });
  }

  /** A new invitation link for a user (one who lost theirs, or forgot their password); an earlier link stops working. */
  async reinvite(principal: Principal, id: number): Promise<{ invitation_url: string; invitation_expires_at: string }> {
    const organizationId = organizationOfCaller(principal);
    return this.unitOfWork.run(async (tx) => {
      const user = await this.people.findUser(organizationId, id, tx);
      if (!user) throw notFound('user', id);
      if (!user.is_active) throw new AppError(409, `user ${id} is deactivated; reactivate them (PATCH is_active: true) first`);
      tx.audit({ organization_id: organizationId, action: 'user.invited', target_type: 'user', target_id: id, data: {} });
      return this.invitations.issue(tx, id);
    }, { by: principal });
  }

  async listUsers(principal: Principal): Promise<{ users: UserRecord[]; count: number }> {
    const users = await this.people.listUsers(organizationOfCaller(principal));
    return { users, count: users.length };
  }

  async getUser(principal: Principal, id: number): Promise<UserRecord> {
    const user = await this.people.findUser(organizationOfCaller(principal), id);
    if (!user) throw notFound('user', id);
    return user;
  }

  /** Renames, changes the role of, or (re)activates a user. */
  async updateUser(principal: Principal, id: number, changes: UserChanges): Promise<UserRecord> {
    refuseNul(changes);
    const organizationId = organizationOfCaller(principal);
    const updated = await this.unitOfWork.run(async (tx) => {
      await this.keepAnAdmin(tx, organizationId, id, changes);
      if (changes.slack_user_id) await this.refuseTakenSlackUser(tx, organizationId, id, changes.slack_user_id);
      const user = await this.people.updateUser(tx, organizationId, id, changes, this.clock());
      // A deactivated person is signed out everywhere at once, their open streams ended too.
      if (user && changes.is_active === false) {
        await this.accounts.deleteSessionsOf(tx, id);
        tx.revoke(userPrincipalId(id));
      }
      if (user) {
        // Who votes in its workflows, and as whom, is part of what an organization's creates read.
        tx.organizationChanged(organizationId);
        tx.audit({ organization_id: organizationId, action: 'user.updated', target_type: 'user', target_id: id, data: { ...changes } });
      }
      return user;
    }, { by: principal });
    if (!updated) throw notFound('user', id);
    return updated;
  }

  /** One Slack user stands for one person: a click must name whom it decides as. */
  private async refuseTakenSlackUser(tx: Tx, organizationId: number, id: number, slackUserId: string): Promise<void> {
    const holder = await this.people.findBySlackUser(tx, organizationId, slackUserId);
    if (holder && holder.id !== id) throw new AppError(409, `the Slack user ${slackUserId} is already ${holder.name}'s (user ${holder.id}); clear it there first`);
  }

  /**
   * Refuses a change that would leave the organization without an active admin person: no one
   * could then manage it from the console. Admins demoting each other at once take turns (the
   * admins' rows are locked), so the second is refused.
   */
  private async keepAnAdmin(tx: Tx, organizationId: number, id: number, changes: UserChanges): Promise<void> {
    const deactivates = changes.is_active === false;
    if (!deactivates && (changes.role === undefined || changes.role === 'admin')) return;
    const admins = await this.people.lockActiveAdmins(tx, organizationId);
    if (admins.length !== 1 || admins[0] !== id) return;
    throw new AppError(
      409,
      `user ${id} is the organization's last active admin, so they cannot be ${deactivates ? 'deactivated' : `made a ${changes.role}`}: make another person an admin first`,
    );
  }

  /** Deactivates a user rather than deleting them: decisions keep their author. */
  async deactivateUser(principal: Principal, id: number): Promise<UserRecord> {
    return this.updateUser(principal, id, { is_active: false });
  }

  async createTeam(principal: Principal, input: TeamInput): Promise<TeamRecord> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const team = { organization_id: organizationId, name: input.name, settings: input.settings ?? {}, created_at: this.clock() };
    return this.unitOfWork.run(async (tx) => {
      const id = await this.people.insertTeam(tx, team);
      for (const userId of new Set(input.member_ids ?? [])) await this.setMemberIn(tx, organizationId, id, userId, true);
      tx.organizationChanged(organizationId);
      tx.audit({ organization_id: organizationId, action: 'team.created', target_type: 'team', target_id: id, data: { name: team.name, member_ids: [...new Set(input.member_ids ?? [])] } });
      return (await this.people.findTeam(organizationId, id, tx)) as TeamRecord;
    }, { by: principal });
  }

  async listTeams(principal: Principal): Promise<{ teams: TeamRecord[]; count: number }> {
    const teams = await this.people.listTeams(organizationOfCaller(principal));
    return { teams, count: teams.length };
  }

  async getTeam(principal: Principal, id: number): Promise<TeamRecord> {
    const team = await this.people.findTeam(organizationOfCaller(principal), id);
    if (!team) throw notFound('team', id);
    return team;
  }

  /** Adds (`member` true) or removes a user of the organization; doing it twice changes nothing. */
  async setMember(principal: Principal, teamId: number, userId: number, member: boolean): Promise<TeamRecord> {
    const organizationId = organizationOfCaller(principal);
    return this.unitOfWork.run(async (tx) => {
      if (!(await this.people.findTeam(organizationId, teamId, tx))) throw notFound('team', teamId);
      const changed = await this.setMemberIn(tx, organizationId, teamId, userId, member);
      if (changed) {
        tx.organizationChanged(organizationId);
        tx.audit({ organization_id: organizationId, action: member ? 'team.member_added' : 'team.member_removed', target_type: 'team', target_id: teamId, data: { user_id: userId } });
      }
      return (await this.people.findTeam(organizationId, teamId, tx)) as TeamRecord;
    }, { by: principal });
  }

  /** A user of the organization only: another's is a 404. */
  private async setMemberIn(tx: Tx, organizationId: number, teamId: number, userId: number, member: boolean): Promise<boolean> {
    if (!(await this.people.findUser(organizationId, userId, tx))) throw notFound('user', userId);
    return this.people.setMember(tx, teamId, userId, member);
  }
}
