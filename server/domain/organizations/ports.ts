/** What the organizations' use cases need from the world: organizations and their keys, agents, the audit log (hosted edition). */

import type { KeyScope } from '../shared/principal';
import type { AuditEntryInput, Tx } from '../shared/unit-of-work';
import type { AgentRecord, ApiKeyRecord, AuditActor, AuditHead, AuditRecord, AuditTarget, OrganizationRecord } from './records';

/** Organizations and their API keys (hosted edition). Keys are found by the SHA-256 of the key. */
export interface OrganizationRepository {
  insertOrganization(tx: Tx, name: string, settings: Record<string, unknown>, now: number): Promise<OrganizationRecord>;
  findOrganization(id: number, tx?: Tx): Promise<OrganizationRecord | null>;
  updateOrganization(tx: Tx, id: number, changes: { name?: string; settings?: Record<string, unknown> }, now: number): Promise<OrganizationRecord | null>;
  insertKey(tx: Tx, key: NewApiKey): Promise<ApiKeyRecord>;
  listKeys(organizationId: number): Promise<ApiKeyRecord[]>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked, unless it already is. */
  revokeKey(tx: Tx, organizationId: number, id: number, now: number): Promise<'revoked' | 'already_revoked' | 'not_found'>;
  /** Records a use of the key, outside any unit of work. */
  touchKey(id: number, now: number): Promise<void>;
}

export interface NewApiKey {
  organization_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scope: KeyScope;
  agent_id: number | null;
  created_at: number;
}

export type NewAgent = Omit<AgentRecord, 'id' | 'created_at'> & { created_at: number };

export interface AgentRepository {
  insert(tx: Tx, agent: NewAgent): Promise<AgentRecord>;
  list(organizationId: number): Promise<AgentRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<AgentRecord | null>;
}

export interface AuditFilters {
  action?: string;
  actor_type?: AuditActor['type'];
  actor_id?: string;
  target_type?: string;
  target_id?: number;
  /** Epoch milliseconds, inclusive. */
  since?: number;
  until?: number;
}

/** The audit log: appended in the transaction of each change, never edited. */
export interface AuditRepository {
  /**
   * Appends `entries` to their organizations' chains and moves their heads, in `tx`; appends to
   * one organization's log take turns, so its sequence has no gaps.
   */
  append(tx: Tx, entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Promise<void>;
  /**
   * Chains the organization's committed entries that are not in its log yet (PostgreSQL chains
   * them after the commit): before a read, so that it sees every change that has committed.
   */
  link(organizationId: number): Promise<void>;
  /** Newest first, before the place `before` in the organization's log when given. */
  list(organizationId: number, filters: AuditFilters, before: number | null, limit: number): Promise<AuditRecord[]>;
  /**
   * The targets named by `refs` that exist in the organization now, with their names: another
   * organization's, or one since removed, is left out.
   */
  targets(organizationId: number, refs: ReadonlyArray<{ type: string; id: number }>): Promise<AuditTarget[]>;
  /** In sequence, after the sequence `after`: the chain in pages, for verification. */
  chain(organizationId: number, after: number, limit: number): Promise<AuditRecord[]>;
  head(organizationId: number): Promise<AuditHead>;
}
