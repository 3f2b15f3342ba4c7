import type { Transaction } from 'sequelize';
import type { DomainEvent, EventFeed, PublishedEvent } from '../domain/events';
import { auditEntryOf, currentActor } from '../domain/audit';
import type { AuditEntryInput, AuditRepository, Tx, UnitOfWork } from '../domain/ports';
import type { Database } from './database';
import type { Outbox } from './outbox';

class DatabaseTx implements Tx {
  readonly events: DomainEvent[] = [];
  readonly auditEntries: AuditEntryInput[] = [];

  constructor(readonly transaction: Transaction) {}

  record(event: DomainEvent): void {
    this.events.push(event);
  }

  audit(entry: AuditEntryInput): void {
    this.auditEntries.push(entry);
  }
}

/** The database transaction behind a `Tx` this module made; repositories run their statements in it. */
export function transactionOf(tx: Tx): Transaction {
  return (tx as DatabaseTx).transaction;
}

/**
 * A use case's transaction: its changes, the outbox rows of its events and (with an audit log,
 * in the hosted edition) their audit entries commit together; the events are published to the
 * feed after the commit, so no listener sees a change that did not commit, or misses one that
 * did, and no change commits without its audit entry.
 */
export class DatabaseUnitOfWork implements UnitOfWork {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly feed: EventFeed,
    private readonly auditLog?: AuditRepository,
    private readonly clock: () => number = Date.now,
  ) {}

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let committed: PublishedEvent[] = [];
    const result = await this.db.write(async (transaction) => {
      const tx = new DatabaseTx(transaction);
      const value = await work(tx);
      committed = await this.outbox.write(transaction, tx.events);
      if (this.auditLog) {
        const entries = [...tx.events.map(auditEntryOf).filter((entry) => entry !== null), ...tx.auditEntries];
        if (entries.length > 0) await this.auditLog.append(tx, entries, currentActor(), this.clock());
      }
      return value;
    });
    for (const event of committed) this.feed.publish(event);
    return result;
  }
}
