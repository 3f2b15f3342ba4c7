import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import type { DomainEvent, EventPayloads, EventType, PublishedEvent } from '../domain/events';
import type { Scope } from '../domain/ports';
import type { Database } from './database';
import { reviewPartsSql } from './scope';

const INSERT_EVENT = 'INSERT INTO outbox (organization_id, type, review_id, payload, created_at) VALUES ($organization_id, $type, $review_id, $payload, $created_at)';

/** An event's columns, and its review's agent: who may see the event (a review's agent never changes). */
const EVENT_COLUMNS = 'id, organization_id, (SELECT agent_id FROM reviews WHERE reviews.id = outbox.review_id) AS agent_id, type, review_id, payload';

/** The PostgreSQL channel whose notifications carry `<origin> <id>,<id>…` of committed events. */
export const EVENTS_CHANNEL = 'greenlight_events';

/** How long events are kept for streams that resume (`Last-Event-ID`). */
export const OUTBOX_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Rows older than the retention removed in one go, every this many writes. */
const PRUNE_BATCH = 1_000;
const PRUNE_EVERY_WRITES = 500;

interface OutboxRow {
  id: number;
  organization_id: number | null;
  agent_id: number | null;
  type: string;
  review_id: number;
  payload: string;
}

function published(row: OutboxRow): PublishedEvent {
  return {
    id: Number(row.id),
    type: row.type as EventType,
    organization_id: row.organization_id,
    agent_id: row.agent_id,
    review_id: row.review_id,
    payload: JSON.parse(row.payload) as EventPayloads[EventType],
  } as PublishedEvent;
}

/** The outbox table: events written with their changes, read back by resuming streams and other processes. */
export class Outbox {
  private writes = 0;
  /** Tells this process's notifications from the others' (a listener skips what it published itself). */
  readonly origin = randomUUID();

  constructor(
    private readonly db: Database,
    private readonly clock: () => number,
  ) {}

  /** Writes `events` in `transaction`; returns them with their ids. Now and then also prunes expired rows. */
  async write(transaction: Transaction, events: readonly DomainEvent[]): Promise<PublishedEvent[]> {
    const now = this.clock();
    const stored: PublishedEvent[] = [];
    for (const event of events) {
      const row = { organization_id: event.organization_id, type: event.type, review_id: event.review_id, payload: JSON.stringify(event.payload), created_at: now };
      stored.push({ ...event, id: await this.db.insertReturningId(INSERT_EVENT, row, transaction) } as PublishedEvent);
    }
    if (stored.length > 0 && this.db.dialect === 'postgres') {
      // Delivered by PostgreSQL when, and only if, the transaction commits.
      await this.db.sequelize.query('SELECT pg_notify($channel, $payload)', {
        bind: { channel: EVENTS_CHANNEL, payload: `${this.origin} ${stored.map((event) => event.id).join(',')}` },
        transaction,
      });
    }
    if (++this.writes % PRUNE_EVERY_WRITES === 0) await this.prune(now - OUTBOX_RETENTION_MS, transaction);
    return stored;
  }

  /** Events written since `since` (a time), oldest first: what a listener that lost its connection may have missed. */
  async since(since: number, limit: number): Promise<PublishedEvent[]> {
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE created_at >= $since ORDER BY id LIMIT $limit`,
      { bind: { since, limit }, type: QueryTypes.SELECT },
    );
    return rows.map(published);
  }

  /** Events after `afterId` that `scope` may see, oldest first, at most `limit`. */
  async after(scope: Scope, afterId: number, limit: number): Promise<PublishedEvent[]> {
    const scoped = reviewPartsSql(scope);
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE id > $afterId${scoped.sql} ORDER BY id LIMIT $limit`,
      { bind: { afterId, limit, ...scoped.bind }, type: QueryTypes.SELECT },
    );
    return rows.map(published);
  }

  /** The events with these ids, oldest first. */
  async byIds(ids: readonly number[]): Promise<PublishedEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE id IN (:ids) ORDER BY id`,
      { replacements: { ids }, type: QueryTypes.SELECT },
    );
    return rows.map(published);
  }

  /** The newest event's id, or 0. */
  async lastId(): Promise<number> {
    const [row] = await this.db.sequelize.query<{ last: number | null }>('SELECT MAX(id) AS last FROM outbox', { type: QueryTypes.SELECT });
    return Number(row?.last ?? 0);
  }

  private async prune(before: number, transaction: Transaction): Promise<void> {
    await this.db.sequelize.query(
      'DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE created_at < $before ORDER BY id LIMIT $batch)',
      { bind: { before, batch: PRUNE_BATCH }, transaction },
    );
  }
}
