/** Organizations, their API keys and agents, and their audit log (hosted edition). */

import type { KeyScope } from '../shared/principal';
import type { AuditEntryInput } from '../shared/unit-of-work';

/** An organization's settings: those the service reads, and any others, kept as they are. */
export type OrganizationSettings = {
  /** A review no workflow governs needs two different people's approvals. */
  require_two_approvals?: boolean;
} & Record<string, unknown>;

export interface OrganizationRecord {
  id: number;
  name: string;
  settings: OrganizationSettings;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRecord {
  id: number;
  organization_id: number;
  name: string;
  /** The key's first characters, for people to tell keys apart; never enough to use it. */
  prefix: string;
  scope: KeyScope;
  /** The registered agent an `agent` key belongs to, if any. */
  agent_id: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** An agent registered with an organization (hosted edition). */
export interface AgentRecord {
  id: number;
  organization_id: number;
  name: string;
  framework: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

/** Who made a change, as the audit log records it. */
export interface AuditActor {
  type: 'api_key' | 'user' | 'operator' | 'system';
  /** `key:<id>` for an API key, `user:<id>` for a person, `operator`; null for the system (expiry). */
  id: string | null;
  /** The key's or the person's name when the change was made (null in entries older than labels). */
  label: string | null;
}

/** The fields an entry's hash covers, besides the hash before it (who acted is its actor). */
export interface HashedFields extends Omit<AuditEntryInput, 'bySystem'> {
  actor: AuditActor;
  created_at: string;
}

/**
 * A target of the entries of an audit page, as it is now: its name, and (a review) where people
 * open it. Kept beside the entries, never in them: an entry's hash covers its fields as written.
 */
export interface AuditTarget {
  type: string;
  id: number;
  name: string;
  links?: { dashboard: string };
}

export interface AuditRecord extends HashedFields {
  id: number;
  /** The entry's place in its organization's log: 1, 2, 3 … without gaps. */
  sequence: number;
  prev_hash: string;
  hash: string;
}

/** Where an organization's log ends, kept apart from its entries: its newest entry's sequence and hash (0 and the genesis hash before the first). */
export interface AuditHead {
  sequence: number;
  hash: string;
}

/**
 * Whether an organization's log holds, up to its head: `first_invalid_id` names the first entry
 * that does not; null with `valid` false, the entries end before the head (the newest removed).
 */
export interface AuditVerification {
  valid: boolean;
  /** Entries checked. */
  entries: number;
  first_invalid_id: number | null;
  head: AuditHead;
}
