/** What the people's use cases need from the world: users and teams, passwords, invitations and sessions (hosted edition). */

import type { Tx } from '../shared/unit-of-work';
import type { TeamRecord, UserRecord } from './records';

export type NewUser = Pick<UserRecord, 'organization_id' | 'email' | 'name' | 'role'> & { created_at: number };

/** The people of an organization and their teams (hosted edition). */
export interface PeopleRepository {
  /** The new user, or null when the organization already has one with that e-mail. */
  insertUser(tx: Tx, user: NewUser): Promise<UserRecord | null>;
  listUsers(organizationId: number): Promise<UserRecord[]>;
  findUser(organizationId: number, id: number, tx?: Tx): Promise<UserRecord | null>;
  updateUser(tx: Tx, organizationId: number, id: number, changes: Partial<Pick<UserRecord, 'name' | 'role' | 'is_active' | 'slack_user_id'>>, now: number): Promise<UserRecord | null>;
  /** The person of the organization linked to this Slack user, if any. */
  findBySlackUser(tx: Tx, organizationId: number, slackUserId: string): Promise<UserRecord | null>;
  /**
   * The ids of the organization's active admins, their rows held until the transaction ends
   * (PostgreSQL; SQLite's writes take turns anyway): changes that could leave it without one
   * take turns, and each sees what the one before it did.
   */
  lockActiveAdmins(tx: Tx, organizationId: number): Promise<number[]>;
  insertTeam(tx: Tx, team: { organization_id: number; name: string; settings: Record<string, unknown>; created_at: number }): Promise<number>;
  listTeams(organizationId: number): Promise<TeamRecord[]>;
  findTeam(organizationId: number, id: number, tx?: Tx): Promise<TeamRecord | null>;
  /** Adds (or, with `member` false, removes) a member; false when the user already was (or was not) one. */
  setMember(tx: Tx, teamId: number, userId: number, member: boolean): Promise<boolean>;
  /** The names of the teams a user is a member of. */
  teamNamesOf(userId: number): Promise<string[]>;
}

/** A user as signing in sees them: with their password's hash and their organization's name. */
export interface UserCredentials {
  user: UserRecord;
  passwordHash: string | null;
  organizationName: string;
}

export interface NewSession {
  /** SHA-256 of the cookie's token; the token itself is never stored. */
  token_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

/** Passwords, invitation links and sessions of the hosted edition's people. */
export interface SignInRepository {
  /** Active users with this (normalized) e-mail, in every organization. */
  findByEmail(email: string): Promise<UserCredentials[]>;
  /** The user a live invitation link (by its token's hash) belongs to. */
  findByInvitation(tokenHash: string, now: number): Promise<UserCredentials | null>;
  /** Replaces the user's invitation link: an earlier one stops working. */
  setInvitation(tx: Tx, userId: number, tokenHash: string, expiresAt: number): Promise<void>;
  /** Sets the password and uses up the invitation link. */
  setPassword(tx: Tx, userId: number, passwordHash: string, now: number): Promise<void>;
  insertSession(tx: Tx, session: NewSession): Promise<void>;
  /** The session's active user, or null for an unknown, expired or deactivated one. */
  findSession(tokenHash: string, now: number): Promise<(UserCredentials & { expiresAt: number }) | null>;
  deleteSession(tx: Tx, tokenHash: string): Promise<void>;
  /** Ends every session of a user (deactivated). */
  deleteSessionsOf(tx: Tx, userId: number): Promise<void>;
  /** The names of the teams a user is a member of. */
  teamNamesOf(userId: number): Promise<string[]>;
  /** Forgets a user's expired sessions: done at each sign-in, so that they do not pile up. */
  deleteExpiredSessions(tx: Tx, userId: number, now: number): Promise<void>;
}
