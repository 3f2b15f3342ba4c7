/**
 * What every use case needs from the world to change anything: one transaction at a time with
 * the events and audit entries it records, a clock, a log, and work that must run in one
 * process at a time. Implemented by `server/db/`.
 */

import type { DomainEvent } from './events';
import type { Principal } from './principal';

/** Milliseconds since the epoch; tests set it to make durations exact. */
export type Clock = () => number;

/**
 * One transaction in progress. Repositories' writes take it; `record` writes an event to the
 * outbox in the same transaction, published to the event feed once, and only once, it commits.
 */
export interface Tx {
  record(event: DomainEvent): void;
  /** Appends an entry to the audit log in this transaction (hosted edition); review events get theirs from `record`. */
  audit(entry: AuditEntryInput): void;
  /**
   * Once this transaction commits, `principalId`'s credential no longer holds: every process
   * ends the live streams and MCP sessions it opened (see `Revocation`).
   */
  revoke(principalId: string): void;
  /**
   * Once this transaction commits, every process forgets what it keeps of the organization's
   * routing rules, workflows and people, and reads them again for its next create (see
   * `OrganizationChange`).
   */
  organizationChanged(organizationId: number): void;
}

/** Background work (expiry, webhook deliveries, evaluation runs): no caller asked for it. */
export const SYSTEM = 'system';

/** Who makes a change: the caller it was made for, or the system. */
export type Actor = Principal | typeof SYSTEM;

export interface WorkOptions {
  /** Who makes the change: its audit entries name them. */
  by: Actor;
  /**
   * The work touches nothing but its transaction, so it may be run again from the start and
   * only its last run counts. SQLite then shares a commit among such writes without a savepoint
   * for each; should one of them fail, the shared transaction is rolled back and run again.
   */
  rerunnable?: boolean;
}

/** Runs `work` in one transaction, then publishes the events it recorded. */
export interface UnitOfWork {
  run<T>(work: (tx: Tx) => Promise<T>, options: WorkOptions): Promise<T>;
}

/** What the domain says about its background work. */
export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Background work that must run in one process at a time among those sharing the database. */
export interface OneAtATime {
  /** Runs `work` unless another process is running `task` right now; says whether it ran. */
  run(task: string, work: () => Promise<void>): Promise<boolean>;
}

/** An entry as a use case asks for it, in the transaction of its change. */
export interface AuditEntryInput {
  organization_id: number;
  action: string;
  target_type: string;
  target_id: number | null;
  data: Record<string, unknown>;
  /** Done by the system, whoever's request it ran in (a rule's decision at creation): its actor is `system`. */
  bySystem?: true;
}
