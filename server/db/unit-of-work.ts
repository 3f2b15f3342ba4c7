import type { Transaction } from 'sequelize';
import { CONTROL_TYPES, type DomainEvent, type EventFeed, type OrganizationChange, type OutboxEntry, type PublishedEvent, type Revocation } from '../domain/shared/events';
import { auditActorOf, auditEntryOf } from '../domain/organizations/audit';
import type { AuditEntryInput, Tx, UnitOfWork, WorkOptions } from '../domain/shared/unit-of-work';
import type { AuditRepository } from '../domain/organizations/ports';
import type { AuditActor } from '../domain/organizations/records';
import type { Database, Statement } from './database';
import type { Outbox } from './outbox';
import type { DeliveriesOfEntry, WebhookEnqueuer } from '../domain/webhooks/webhooks';
import type { ChatEnqueuer } from '../domain/chat/messages';

class DatabaseTx implements Tx {
  readonly events: DomainEvent[] = [];
  readonly revocations: Revocation[] = [];
  readonly changes = new Map<number, OrganizationChange>();
  readonly auditEntries: AuditEntryInput[] = [];

  constructor(readonly transaction: Transaction) {}

  record(event: DomainEvent): void {
    this.events.push(event);
  }

  audit(entry: AuditEntryInput): void {
    this.auditEntries.push(entry);
  }

  revoke(principalId: string): void {
    this.revocations.push({ type: 'principal.revoked', principal_id: principalId });
  }

  organizationChanged(organizationId: number): void {
    this.changes.set(organizationId, { type: 'organization.changed', organization_id: organizationId });
  }
}

/** The database transaction behind a `Tx` this module made; repositories run their statements in it. */
export function transactionOf(tx: Tx): Transaction {
  return (tx as DatabaseTx).transaction;
}

/** The organizations each transaction was told have no active webhook endpoint. */
const endpointless = new WeakMap<Transaction, Set<number>>();

/**
 * Tells the unit of work that `organizationId` had no active webhook endpoint when `transaction`'s
 * change was asked for (read ahead of it, `ReviewStore`): its events owe that organization no
 * delivery, and none is looked up.
 */
export function withoutEndpoints(transaction: Transaction, organizationId: number): void {
  const known = endpointless.get(transaction);
  if (known) known.add(organizationId);
  else endpointless.set(transaction, new Set([organizationId]));
}

function owesDeliveries(transaction: Transaction, event: { organization_id: number | null }): boolean {
  return event.organization_id === null || !endpointless.get(transaction)?.has(event.organization_id);
}

/**
 * A use case's transaction: its changes, the outbox rows of its events and (with an audit log,
 * in the hosted edition) their audit entries commit together; the events are published to the
 * feed after the commit, so no listener sees a change that did not commit, or misses one that
 * did, and no change commits without its audit entry.
 */
/**
 * The audit log as a transaction writes to it: on PostgreSQL, an insert the outbox's statement
 * carries, its entries chained once they have committed (`AuditStore`).
 */
export interface AuditLog extends Pick<AuditRepository, 'append'> {
  pendingInsert(entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Statement | null;
  linkLater(organizationIds: Iterable<number>): void;
}

/** The webhook store as a transaction asks it: on PostgreSQL, one event's deliveries, written in the outbox's statement (`WebhookStore`). */
export interface WebhookInserts {
  deliveriesFromEntry(deliveries: DeliveriesOfEntry): Statement;
}

export interface UnitOfWorkOptions {
  /** The hosted edition's audit log: every change's entry commits with it. */
  auditLog?: AuditLog;
  /** Webhooks (every hosted organization's, or the installation's endpoints): the deliveries a change owes commit with it. */
  webhooks?: { enqueuer: WebhookEnqueuer; inserts: WebhookInserts };
  /** Reviews in a chat workspace: the messages a change owes commit with it. */
  chat?: ChatEnqueuer;
  clock?: () => number;
}

export class DatabaseUnitOfWork implements UnitOfWork {
  private readonly auditLog?: AuditLog;
  private readonly webhooks?: { enqueuer: WebhookEnqueuer; inserts: WebhookInserts };
  private readonly chat?: ChatEnqueuer;
  private readonly clock: () => number;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly feed: EventFeed,
    options: UnitOfWorkOptions = {},
  ) {
    this.auditLog = options.auditLog;
    this.webhooks = options.webhooks;
    this.chat = options.chat;
    this.clock = options.clock ?? Date.now;
  }

  async run<T>(work: (tx: Tx) => Promise<T>, options: WorkOptions): Promise<T> {
    let committed: OutboxEntry[] = [];
    /** The organizations whose entries this transaction queued to be chained after its commit (PostgreSQL). */
    let toChain = new Set<number>();
    const result = await this.db.write(async (transaction) => {
      const tx = new DatabaseTx(transaction);
      const value = await work(tx);
      const now = this.clock();
      const audited = this.auditLog ? [...tx.events.map(auditEntryOf).filter((entry) => entry !== null), ...tx.auditEntries] : [];
      // Who acts is named only where there is something to audit: the self-hosted edition's creates skip it.
      const actor = audited.length > 0 ? auditActorOf(options.by) : null;
      // PostgreSQL's audit entries, and a create's webhook deliveries, travel in the outbox's statement (a round trip or two fewer); SQLite's are written apart.
      const pending = actor ? this.auditLog?.pendingInsert(audited, actor, now) : null;
      toChain = new Set(pending ? audited.map((entry) => entry.organization_id) : []);
      // Nothing goes after the outbox's statement but chat messages and SQLite's audit entries: without them, a
      // transaction whose every change that statement carries sends it alone, and it commits by itself.
      const last = !(this.chat && tx.events.length > 0) && !(audited.length > 0 && !pending);
      const written = await this.outbox.write(
        transaction,
        [...tx.events, ...tx.revocations, ...tx.changes.values()],
        { alongside: pending ?? undefined, fromEntry: this.deliveriesFromEntry(transaction, tx.events) ?? undefined },
        last,
      );
      committed = written.entries;
      const events = committed.filter((entry): entry is PublishedEvent => !CONTROL_TYPES.includes(entry.type));
      const owing = this.webhooks ? events.filter((event) => owesDeliveries(transaction, event)) : [];
      if (this.webhooks && owing.length > 0) {
        if (written.madeFromEntry === null) await this.webhooks.enqueuer.enqueue(tx, owing);
        else if (written.madeFromEntry > 0) this.webhooks.enqueuer.delivered(owing[0]);
      }
      if (this.chat && events.length > 0) await this.chat(tx, events);
      if (actor && !pending) await this.auditLog?.append(tx, audited, actor, now);
      return value;
    }, options);
    if (toChain.size > 0) this.auditLog?.linkLater(toChain);
    for (const entry of committed) this.feed.publish(entry);
    return result;
  }

  /**
   * The insert of the deliveries a transaction's one event owes, for the outbox's statement to
   * send; null when there is none to send, or no such statement (SQLite writes them apart).
   */
  private deliveriesFromEntry(transaction: Transaction, events: readonly DomainEvent[]): Statement | null {
    if (!this.webhooks || events.length !== 1 || !this.db.combined || !owesDeliveries(transaction, events[0])) return null;
    const deliveries = this.webhooks.enqueuer.deliveriesOf(events[0]);
    return deliveries ? this.webhooks.inserts.deliveriesFromEntry(deliveries) : null;
  }
}
