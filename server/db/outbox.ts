import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import type { EventPayloads, EventType, OrganizationChange, OutboxEntry, OutboxInput, PublishedEvent, Revocation } from '../domain/shared/events';
import type { Scope } from '../domain/shared/principal';
import type { Database, Statement } from './database';
import { channelOf, notificationAroundId, notifications } from './event-notifications';
import { reviewPartsSql } from './scope';

const INSERT_EVENT = 'INSERT INTO outbox (organization_id, type, review_id, payload, created_at) VALUES ($organization_id, $type, $review_id, $payload, $created_at)';
/**
 * PostgreSQL: one entry stored and its notification sent with it (delivered when, and only if,
 * the statement's transaction commits), with the inserts the transaction held back and those
 * `carried` brings, all in one round trip.
 */
function insertAnnouncedEvent(heldBack: readonly Statement[], carried: Carried): string {
  const alongside = carried.alongside?.sql ?? '';
  const fromEntry = carried.fromEntry?.sql ?? '';
  // Written once per shape (a create sends the same statement every time). Found by its parts'
  // texts in turn, the stores' constants whose hashes V8 keeps, not by a key joined from them per create.
  let shapes = announcedEventStatements;
  for (const held of heldBack) shapes = shapes.next(held.sql);
  shapes = shapes.next(alongside).next(fromEntry);
  if (shapes.statement === undefined) {
    const parts = [
      ...heldBack.map((held, index) => `held_${index} AS (${held.sql})`),
      `entry AS (${INSERT_EVENT} RETURNING id)`,
      ...(alongside ? [`alongside AS (${alongside})`] : []),
      ...(fromEntry ? [`from_entry AS (${fromEntry} RETURNING 1)`] : []),
    ];
    shapes.statement = `WITH ${parts.join(', ')} SELECT id, pg_notify($channel, $before || id || $after)${fromEntry && ', (SELECT count(*) FROM from_entry) AS made'} FROM entry`;
  }
  return shapes.statement;
}

/** `insertAnnouncedEvent`'s statements, by the texts of their parts in turn. */
class StatementShapes {
  statement?: string;
  private readonly after = new Map<string, StatementShapes>();

  next(part: string): StatementShapes {
    let shapes = this.after.get(part);
    if (!shapes) this.after.set(part, (shapes = new StatementShapes()));
    return shapes;
  }
}

const announcedEventStatements = new StatementShapes();

/** Statements a transaction sends with its outbox entries; their parameters must not share the outbox's names. */
export interface Carried {
  /** An insert, sent in the entry's statement where the database can (a create's one entry on PostgreSQL: a round trip fewer), else after the entries. */
  alongside?: Statement;
  /**
   * An insert made from the one entry stored, which reads its `entry.id` and its `$payload`:
   * sent in the entry's statement only, never alone. How many rows it wrote comes back as
   * `madeFromEntry`.
   */
  fromEntry?: Statement;
}

/** What `Outbox.write` stored. */
export interface Written {
  entries: OutboxEntry[];
  /** The rows `carried.fromEntry` wrote; null where it could not be sent (SQLite, or not one entry), and the caller writes them itself. */
  madeFromEntry: number | null;
}

/** An entry's columns, and its review's agent: who may see the event (a review's agent never changes). */
const EVENT_COLUMNS = 'id, organization_id, (SELECT agent_id FROM reviews WHERE reviews.id = outbox.review_id) AS agent_id, type, review_id, payload';

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

const REVOKED: Revocation['type'] = 'principal.revoked';
const CHANGED: OrganizationChange['type'] = 'organization.changed';


function rowOf(entry: OutboxInput, now: number): Omit<OutboxRow, 'id' | 'agent_id'> & { created_at: number } {
  // A revocation or an organization change concerns no review: the column takes no null, so 0.
  if (entry.type === REVOKED) return { organization_id: null, type: entry.type, review_id: 0, payload: JSON.stringify({ principal_id: entry.principal_id }), created_at: now };
  if (entry.type === CHANGED) return { organization_id: entry.organization_id, type: entry.type, review_id: 0, payload: '{}', created_at: now };
  return { organization_id: entry.organization_id, type: entry.type, review_id: entry.review_id, payload: JSON.stringify(entry.payload), created_at: now };
}

function eventOf(row: OutboxRow): PublishedEvent {
  return {
    id: Number(row.id),
    type: row.type as EventType,
    organization_id: row.organization_id,
    agent_id: row.agent_id,
    review_id: row.review_id,
    payload: JSON.parse(row.payload) as EventPayloads[EventType],
  } as PublishedEvent;
}

function entryOf(row: OutboxRow): OutboxEntry {
  if (row.type === CHANGED) return { id: Number(row.id), type: CHANGED, organization_id: Number(row.organization_id) };
  if (row.type !== REVOKED) return eventOf(row);
  return { id: Number(row.id), type: REVOKED, principal_id: (JSON.parse(row.payload) as { principal_id: string }).principal_id };
}

/**
 * The outbox table: events, revocations and organization changes written with their changes,
 * read back by resuming streams (events only) and other processes (all of them).
 */
export class Outbox {
  private writes = 0;
  /** Tells this process's notifications from the others' (a listener skips what it published itself). */
  readonly origin = randomUUID();

  constructor(
    private readonly db: Database,
    private readonly clock: () => number,
  ) {}

  /**
   * Writes `entries` in `transaction`; returns them with their ids. Now and then also prunes
   * expired rows. `last`: nothing follows in the transaction, and where its every change fits in
   * this one statement (`CombinedWrites`), the statement commits by itself.
   */
  async write(transaction: Transaction, entries: readonly OutboxInput[], carried: Carried = {}, last = false): Promise<Written> {
    const now = this.clock();
    if (++this.writes % PRUNE_EVERY_WRITES === 0) await this.prune(now - OUTBOX_RETENTION_MS, transaction);
    const combined = entries.length === 1 ? this.db.combined : undefined;
    if (combined) {
      // A create's one event: stored and announced in one round trip rather than two.
      const [entry] = entries;
      const { before, after } = notificationAroundId(this.origin, entry);
      const binds: Array<Record<string, unknown>> = [{ ...rowOf(entry, now), channel: channelOf(entry), before, after }];
      if (carried.alongside) binds.push(carried.alongside.bind);
      if (carried.fromEntry) binds.push(carried.fromEntry.bind);
      const [row] = await combined.last<{ id: number; made?: number }>(
        transaction,
        (heldBack) => ({ sql: insertAnnouncedEvent(heldBack, carried), binds: [...binds, ...heldBack.map((held) => held.bind)] }),
        last,
      );
      return { entries: [{ ...entry, id: Number(row.id) }], madeFromEntry: carried.fromEntry ? Number(row.made) : null };
    }
    const stored = await this.store(transaction, entries, now);
    if (carried.alongside) await this.db.selectRows(carried.alongside.sql, carried.alongside.bind, transaction);
    return { entries: stored, madeFromEntry: null };
  }

  /** On PostgreSQL, announced to the other processes: delivered when, and only if, the transaction commits. */
  private async store(transaction: Transaction, entries: readonly OutboxInput[], now: number): Promise<OutboxEntry[]> {
    const stored: OutboxEntry[] = [];
    for (const entry of entries) {
      stored.push({ ...entry, id: await this.db.insertReturningId(INSERT_EVENT, rowOf(entry, now), transaction) });
    }
    if (stored.length > 0 && this.db.sql.sharedByProcesses) {
      for (const { channel, payload } of notifications(this.origin, stored)) {
        await this.db.sequelize.query('SELECT pg_notify($channel, $payload)', { bind: { channel, payload }, transaction });
      }
    }
    return stored;
  }

  /** Entries written since `since` (a time), oldest first: what a listener that lost its connection may have missed. */
  async since(since: number, limit: number): Promise<OutboxEntry[]> {
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE created_at >= $since ORDER BY id LIMIT $limit`,
      { bind: { since, limit }, type: QueryTypes.SELECT },
    );
    return rows.map(entryOf);
  }

  /** Events after `afterId` that `scope` may see, oldest first, at most `limit`. */
  async after(scope: Scope, afterId: number, limit: number): Promise<PublishedEvent[]> {
    const scoped = reviewPartsSql(scope);
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE id > $afterId AND type <> $revoked AND type <> $changed${scoped.sql} ORDER BY id LIMIT $limit`,
      { bind: { afterId, limit, revoked: REVOKED, changed: CHANGED, ...scoped.bind }, type: QueryTypes.SELECT },
    );
    return rows.map(eventOf);
  }

  /** The entries with these ids, oldest first. */
  async byIds(ids: readonly number[]): Promise<OutboxEntry[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.sequelize.query<OutboxRow>(
      `SELECT ${EVENT_COLUMNS} FROM outbox WHERE id IN (:ids) ORDER BY id`,
      { replacements: { ids }, type: QueryTypes.SELECT },
    );
    return rows.map(entryOf);
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
