/** An organization's people and teams, and what signing in shows them (hosted edition). */

export interface TeamMember {
  id: number;
  email: string;
  name: string;
  role: UserRole;
}

export interface TeamRecord {
  id: number;
  organization_id: number;
  name: string;
  members: TeamMember[];
  settings: Record<string, unknown>;
  created_at: string;
}

export const USER_ROLES = ['admin', 'reviewer', 'viewer'] as const;

export type UserRole = (typeof USER_ROLES)[number];

/** The roles whose people decide reviews: a viewer only reads them. */
export const DECIDING_ROLES = ['admin', 'reviewer'] as const satisfies readonly UserRole[];

export type DecidingRole = (typeof DECIDING_ROLES)[number];

export interface UserRecord {
  id: number;
  organization_id: number;
  email: string;
  name: string;
  role: UserRole;
  is_active: boolean;
  /** False until the person has set a password through their invitation link. */
  password_set: boolean;
  /** Their Slack user (U…), when an admin linked it: they decide from Slack as themselves. */
  slack_user_id: string | null;
  created_at: string;
  updated_at: string;
}

/** What a signed-in dashboard knows of its session (hosted edition). */
export interface SessionView {
  user: UserRecord;
  organization: { id: number; name: string };
  /** The names of the person's teams: reviews assigned to one are theirs too ("Mine"). */
  teams: string[];
  /** Sent back as `X-CSRF-Token` on every request that changes something. */
  csrf_token: string;
  expires_at: string;
}

/** Whom an invitation link is for. */
export interface InvitationView {
  email: string;
  name: string;
  organization: { id: number; name: string };
}
