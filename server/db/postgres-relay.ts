import pg from 'pg';
import { type EventFeed, NONE_FROM_ELSEWHERE, type OutboxEntry } from '../domain/shared/events';
import type { Log } from '../domain/shared/unit-of-work';
import { EVERY_PROCESS_CHANNEL, ON_DEMAND_CHANNEL, parseNotification } from './event-notifications';
import type { Outbox } from './outbox';

/** Ids remembered as published here, so one that arrives twice (a notification and a catch-up) goes out once. */
const REMEMBERED_IDS = 10_000;
/** How far back a reconnected listener looks: past the time its connection was lost, to cover clocks a little apart. */
const CATCH_UP_MARGIN_MS = 30_000;
const CATCH_UP_LIMIT = 10_000;
const MAX_BACKOFF_MS = 5_000;

export interface RelayOptions {
  url: string;
  outbox: Outbox;
  feed: EventFeed;
  /** Re-reads what waiting requests wait on: run after a reconnect, when events may have been missed. */
  recheck: () => Promise<void>;
  log: Log;
  clock?: () => number;
}

/**
 * Brings the events (and revocations) other API processes commit to the same PostgreSQL into
 * this process's feed: a connection of its own LISTENs on the outbox's channels, whose
 * notifications summarise the committed entries — always on the channel of those every process
 * hears of, and on the other while a listener here may want its entries (a live stream). The
 * relay reads those the feed wants (a revocation, a decision someone here waits for, everything
 * while a live stream is open) from the outbox, in id order, and publishes them here.
 * After a lost connection it reconnects, publishes what was written meanwhile, and has the
 * waiting requests re-check their reviews, so nothing is missed.
 */
export class PostgresEventRelay {
  private client: pg.Client | undefined;
  private readonly published = new Set<number>();
  private stopped = false;
  private lostAt: number | null = null;
  private pending: Promise<void> = Promise.resolve();
  /** Ids named by notifications, for the read that is queued next. */
  private unread: number[] = [];
  private readonly clock: () => number;

  constructor(private readonly options: RelayOptions) {
    this.clock = options.clock ?? Date.now;
    // What this process publishes itself is remembered too, for the catch-up that may read it again.
    options.feed.subscribe((event) => this.remember(event.id), NONE_FROM_ELSEWHERE);
    options.feed.onRevocation((revocation) => this.remember(revocation.id));
    options.feed.onOrganizationChange((change) => this.remember(change.id));
    options.feed.supplyOnDemand((wanted) => this.hearOnDemand(wanted));
  }

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    client.on('notification', (message) => this.received(message.payload ?? ''));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${EVERY_PROCESS_CHANNEL}`);
    this.client = client;
    // Read after the client is set: a change of the feed's wants from here on goes to this client.
    if (this.options.feed.wantsOnDemand) await this.hearOnDemand(true);
  }

  /**
   * Listens on the on-demand channel, or stops. Once a LISTEN has answered, every transaction
   * that commits later is announced here; the connection runs its queries in order, so the
   * last of a quick LISTEN, UNLISTEN, LISTEN holds. A lost connection is seen to by `lost`:
   * the reconnection listens as the feed then wants and reads what was missed.
   */
  private async hearOnDemand(wanted: boolean): Promise<void> {
    await this.client?.query(`${wanted ? 'LISTEN' : 'UNLISTEN'} ${ON_DEMAND_CHANNEL}`).catch(() => undefined);
  }

  private received(payload: string): void {
    const { origin, entries } = parseNotification(payload);
    if (origin === this.options.outbox.origin) return;
    const { feed } = this.options;
    const ids = entries.filter((entry) => !this.published.has(entry.id) && feed.wants(entry)).map((entry) => entry.id);
    if (ids.length === 0) return;
    const readQueued = this.unread.length > 0;
    this.unread.push(...ids);
    if (readQueued) return;
    // One read at a time, in the order the notifications came: events reach the feed in commit
    // order. Notifications that arrive while a read waits its turn join it, so a burst of
    // another process's creates costs one query here, not one per event.
    this.pending = this.pending.then(() => {
      const batch = this.unread;
      this.unread = [];
      return this.publishRead(() => this.options.outbox.byIds(batch));
    });
  }

  private async publishRead(read: () => Promise<OutboxEntry[]>): Promise<void> {
    try {
      for (const entry of await read()) {
        if (this.published.has(entry.id)) continue;
        this.options.feed.publish(entry);
      }
    } catch (error) {
      this.options.log.error('could not read the events of other processes', { error: String(error) });
    }
  }

  private remember(id: number): void {
    this.published.add(id);
    if (this.published.size > REMEMBERED_IDS) this.published.delete(this.published.values().next().value as number);
  }

  private lost(client: pg.Client): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    this.lostAt ??= this.clock();
    // What other processes commit from now on may never be announced here.
    this.options.feed.hearing(false);
    this.options.log.error('lost the PostgreSQL connection that brings other processes\' events; reconnecting');
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.connect();
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, MAX_BACKOFF_MS)));
      }
    }
    if (this.stopped || this.lostAt === null) return;
    // Listening again: whatever commits from here on is announced. What committed while the
    // connection was down is read below, but only as far as CATCH_UP_LIMIT goes.
    this.options.feed.hearing(true);
    const since = this.lostAt - CATCH_UP_MARGIN_MS;
    this.lostAt = null;
    this.pending = this.pending.then(async () => {
      await this.publishRead(() => this.options.outbox.since(since, CATCH_UP_LIMIT));
      await this.options.recheck().catch((error: unknown) => this.options.log.error('re-checking waited reviews failed', { error: String(error) }));
    });
    this.options.log.info('reconnected to PostgreSQL for other processes\' events');
  }
}
