/** Who is calling and whose records they may see: set by authentication, taken by every use case and repository. */

import type { UserRole } from '../people/records';

/** Whose records a call may see and change. Every repository method takes one. */
export interface Scope {
  /**
   * The caller's organization. Null in the self-hosted edition: one installation holds every
   * record, and `organization_id` is a label agents may set.
   */
  readonly organizationId: number | null;
  /**
   * The registered agent an agent key belongs to: the caller reaches that agent's reviews
   * alone, and what belongs to them; another agent's review is as if it did not exist.
   */
  readonly agentId?: number;
}

/** The self-hosted installation's scope: every record. */
export const INSTALLATION: Scope = { organizationId: null };

export const PRINCIPAL_KINDS = ['api_key', 'user', 'operator', 'anonymous_local'] as const;

export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

/** Who is calling, as authentication established it; never a name the caller typed. */
export interface Principal {
  kind: PrincipalKind;
  scope: Scope;
  /**
   * Stands for the caller where something is kept per caller (idempotency keys): a digest of
   * its API key, never the key; empty for the anonymous local caller.
   */
  id: string;
  /** What an organization's API key may do (hosted edition): everything in it, or an agent's part. */
  access?: KeyScope;
  /** The caller in words, for the audit log: a key's name, a person's name. */
  label?: string;
  /** A signed-in person (hosted edition): who they are and what their role lets them do. */
  user?: { id: number; name: string; role: UserRole };
}

export const KEY_SCOPES = ['admin', 'agent'] as const;

export type KeyScope = (typeof KEY_SCOPES)[number];

/** The operator's scope holds no organization's records: the operator key only creates organizations. */
export const NO_ORGANIZATION: Scope = { organizationId: 0 };

/** Whoever holds the operator key (or runs `greenlight org create` on the database's machine). */
export const OPERATOR: Principal = { kind: 'operator', scope: NO_ORGANIZATION, id: 'operator', label: 'operator' };

/** An agent or a reviewer on this machine, where authentication is off. */
export const ANONYMOUS_LOCAL: Principal = { kind: 'anonymous_local', scope: INSTALLATION, id: '' };
