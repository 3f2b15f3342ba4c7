import type { AttachmentRecord, FeedbackRecord, ReviewRecord } from '../reviews/records';

/** What happened, once it has committed. Payloads are the records as the API returns them. */
export interface EventPayloads {
  'review.created': ReviewRecord;
  /** The review with its `decision`. */
  'review.decided': ReviewRecord;
  /** A vote that did not yet decide the review: the review, still pending, with its workflow's progress. */
  'review.vote': ReviewRecord;
  /** The pending review whose `waiting_until` moved: an agent started waiting on it, or stopped. */
  'review.waiting': ReviewRecord;
  'feedback.created': FeedbackRecord;
  'attachment.created': AttachmentRecord;
  'attachment.deleted': { id: number; review_id: number };
}

export type EventType = keyof EventPayloads;

export const EVENT_TYPES: readonly EventType[] = ['review.created', 'review.decided', 'review.vote', 'review.waiting', 'feedback.created', 'attachment.created', 'attachment.deleted'];

/** The review an event is about, as far as who may see the event goes: its organization, and its agent. */
export type EventSubject = Pick<ReviewRecord, 'id' | 'organization_id' | 'agent_id'>;

/** An event as a use case records it, in the transaction of the change it describes. */
export type DomainEvent = {
  [K in EventType]: { type: K; organization_id: number | null; agent_id: number | null; review_id: number; payload: EventPayloads[K] };
}[EventType];

/** An event as the feed delivers it: committed, with the id the outbox gave it (increasing). */
export type PublishedEvent = DomainEvent & { id: number };

/** Builds an event about `review` with its payload's type checked against its name. */
export function domainEvent<K extends EventType>(type: K, review: EventSubject, payload: EventPayloads[K]): DomainEvent {
  return { type, organization_id: review.organization_id, agent_id: review.agent_id, review_id: review.id, payload } as DomainEvent;
}

/**
 * A principal (`Principal.id`) whose credential stopped being valid: an API key revoked, a person
 * deactivated or signed out. Every request is authenticated again, but a live stream or an MCP
 * session, once open, would outlive the credential it was opened with: each API process ends the
 * principal's. It travels as events do, through the outbox (and NOTIFY to other processes on
 * PostgreSQL), so that every process learns of it once its change commits, after a lost
 * connection too; no client or webhook endpoint is ever sent it.
 */
export interface Revocation {
  type: 'principal.revoked';
  principal_id: string;
}

export type PublishedRevocation = Revocation & { id: number };

/**
 * What decides where an organization's new reviews go changed: a routing rule or workflow, a
 * person or team, the organization's settings. Each API process keeps its organizations'
 * compiled rules and workflows between creates, and forgets an organization's on hearing of
 * this. It travels as a revocation does (every process reads every one; no client or webhook
 * endpoint is ever sent it).
 */
export interface OrganizationChange {
  type: 'organization.changed';
  organization_id: number;
}

export type PublishedOrganizationChange = OrganizationChange & { id: number };

/** What a transaction writes to the outbox, before the outbox numbers it: its events, and the entries that travel with them. */
export type OutboxInput = DomainEvent | Revocation | OrganizationChange;

/** What the outbox holds: events, and the revocations and organization changes that travel with them. */
export type OutboxEntry = PublishedEvent | PublishedRevocation | PublishedOrganizationChange;

/** The entries of the outbox that are not events: no stream, webhook or chat is ever told of them. */
export const CONTROL_TYPES: ReadonlyArray<OutboxEntry['type']> = ['principal.revoked', 'organization.changed'];

export type EventListener = (event: PublishedEvent) => void;
export type RevocationListener = (revocation: PublishedRevocation) => void;
export type OrganizationChangeListener = (change: PublishedOrganizationChange) => void;
/** Told `false` when this process may no longer hear of every entry other processes commit (its relay lost its connection), `true` once it does again. */
export type HearingListener = (hearsEverything: boolean) => void;

/**
 * What another process's notification says of an entry it committed, before this process
 * reads the entry itself: enough to tell whether anything here needs it.
 */
export interface EntrySummary {
  id: number;
  type: OutboxEntry['type'];
  review_id: number;
  /** A created review that expires (the expiry timer of every process must learn of it). */
  expires: boolean;
}

/** Which of the entries other processes commit a listener needs; the feed reads only those. */
export type Interest = (summary: EntrySummary) => boolean;

/**
 * Whether every process hears of such an entry another commits, whatever its listeners: a
 * decision (a request here may wait on it), the create of a review that expires (every
 * process's expiry timer must learn of it), a revocation, an organization change. Of the rest
 * (creates that do not expire, votes, waits, feedback, attachments), which only a live stream
 * wants, a process hears only while a listener here may want them: with several processes,
 * hearing of every create of every other one cost each process more than reading none of them.
 */
export function announcedToAll(summary: Pick<EntrySummary, 'type' | 'expires'>): boolean {
  return summary.type === 'review.decided' || CONTROL_TYPES.includes(summary.type) || (summary.type === 'review.created' && summary.expires);
}

/** Interests that ask only for entries `announcedToAll`: a listener with one does not make this process hear of the rest. */
const ANNOUNCED_TO_ALL_ONLY = new WeakSet<Interest>();

/** Marks `interest` as asking only for entries `announcedToAll` (nothing checks that it does). */
export function amongAnnouncedToAll(interest: Interest): Interest {
  ANNOUNCED_TO_ALL_ONLY.add(interest);
  return interest;
}

const EVERY_ENTRY: Interest = () => true;
/** For a listener that only reacts to what this process commits. */
export const NONE_FROM_ELSEWHERE: Interest = amongAnnouncedToAll(() => false);

/**
 * What brings other processes' entries here (the PostgreSQL relay): told when this process
 * starts (`true`) or stops needing the entries not `announcedToAll`; resolves once it hears
 * of them, or has stopped.
 */
export type OnDemandSource = (wanted: boolean) => Promise<void>;

/**
 * The committed events of this process's view of the database, in the order they reached it:
 * waiters, live streams and the desktop shell subscribe here; what holds a principal's
 * connections open listens to revocations. The unit of work publishes what its transactions
 * recorded once they commit; with several processes on PostgreSQL, a relay publishes the
 * others' too — those that some listener's interest asks for (`wants`), so that a process with
 * no one waiting and no stream open does not read back every other process's every event, nor
 * hear of those not `announcedToAll` (`supplyOnDemand`).
 * A listener that throws is reported and skipped: it must never turn a committed write into an
 * error for the caller who made it.
 */
export class EventFeed {
  private readonly listeners = new Map<EventListener, Interest>();
  private readonly revocationListeners = new Set<RevocationListener>();
  private readonly changeListeners = new Set<OrganizationChangeListener>();
  private readonly hearingListeners = new Set<HearingListener>();
  /** Listeners whose interest may ask for entries not `announcedToAll`. */
  private wantingOnDemand = 0;
  private onDemandSource: OnDemandSource | undefined;
  private onDemandHeard: Promise<void> = Promise.resolve();

  constructor(private readonly onListenerError: (entry: OutboxEntry, error: unknown) => void = () => {}) {}

  /** Every event; of other processes', those `interest` asks for (all, unless it says). */
  subscribe(listener: EventListener, interest: Interest = EVERY_ENTRY): () => void {
    this.listeners.set(listener, interest);
    const onDemand = !ANNOUNCED_TO_ALL_ONLY.has(interest);
    if (onDemand && ++this.wantingOnDemand === 1) this.onDemandHeard = this.onDemandSource?.(true) ?? Promise.resolve();
    return () => {
      if (!this.listeners.delete(listener) || !onDemand) return;
      if (--this.wantingOnDemand === 0) void this.onDemandSource?.(false);
    };
  }

  /** Listens to one type of event (of other processes', those `interest` asks for; all of that type, unless it says). */
  on<K extends EventType>(
    type: K,
    listener: (payload: EventPayloads[K], event: PublishedEvent) => void,
    interest: Interest = ofType(type),
  ): () => void {
    return this.subscribe((event) => {
      if (event.type === type) listener(event.payload as EventPayloads[K], event);
    }, interest);
  }

  /** Listens to revocations, which `subscribe` never sees (every process reads every one). */
  onRevocation(listener: RevocationListener): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
  }

  /** Listens to organization changes, which `subscribe` never sees (every process reads every one). */
  onOrganizationChange(listener: OrganizationChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Listens to whether this process hears of every entry committed elsewhere (see `hearing`). */
  onHearing(listener: HearingListener): () => void {
    this.hearingListeners.add(listener);
    return () => this.hearingListeners.delete(listener);
  }

  /**
   * The relay says whether it hears of every entry other processes commit: `false` once its
   * connection is lost (what is committed meanwhile may never be announced here), `true` once
   * it listens again.
   */
  hearing(hearsEverything: boolean): void {
    for (const listener of this.hearingListeners) listener(hearsEverything);
  }

  /** Takes `source` as what brings the entries not `announcedToAll` while a listener here may want them. */
  supplyOnDemand(source: OnDemandSource): void {
    this.onDemandSource = source;
  }

  /** Whether some listener here may want entries other processes commit that are not `announcedToAll`. */
  get wantsOnDemand(): boolean {
    return this.wantingOnDemand > 0;
  }

  /**
   * Resolves once this process hears of every entry other processes commit that a listener
   * subscribed before the call may want: a live stream that starts after it misses none.
   */
  heardOnDemand(): Promise<void> {
    return this.onDemandHeard;
  }

  /** Whether an entry another process committed is needed here: a revocation or an organization change always is. */
  wants(summary: EntrySummary): boolean {
    if (summary.type === 'principal.revoked' || summary.type === 'organization.changed') return true;
    for (const interest of this.listeners.values()) if (interest(summary)) return true;
    return false;
  }

  publish(entry: OutboxEntry): void {
    if (entry.type === 'principal.revoked') this.notify(this.revocationListeners, entry);
    else if (entry.type === 'organization.changed') this.notify(this.changeListeners, entry);
    else this.notify(this.listeners.keys(), entry);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  private notify<T extends OutboxEntry>(listeners: Iterable<(entry: T) => void>, entry: T): void {
    for (const listener of listeners) {
      try {
        listener(entry);
      } catch (error) {
        this.onListenerError(entry, error);
      }
    }
  }
}

/** An interest in every entry of `type`; among those `announcedToAll` where the type's every entry is. */
function ofType(type: EventType): Interest {
  const interest: Interest = (summary) => summary.type === type;
  return announcedToAll({ type, expires: false }) ? amongAnnouncedToAll(interest) : interest;
}
