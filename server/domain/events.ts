import type { AttachmentRecord, FeedbackRecord, ReviewRecord } from './records';

/** What happened, after it committed. Payloads are the records as the API returns them. */
export interface ServiceEvents {
  'review.created': ReviewRecord;
  /** The review with its `decision`. */
  'review.decided': ReviewRecord;
  'feedback.created': FeedbackRecord;
  'attachment.created': AttachmentRecord;
  'attachment.deleted': { id: number; review_id: number };
}

export const EVENT_TYPES: readonly EventType[] = [
  'review.created',
  'review.decided',
  'feedback.created',
  'attachment.created',
  'attachment.deleted',
];

export type EventType = keyof ServiceEvents;
export type Listener<K extends EventType> = (payload: ServiceEvents[K]) => void;

/**
 * The in-process event bus: one server process owns the SQLite file, so every commit is
 * seen here. A listener that throws is reported and skipped; it must never turn a committed
 * write into an error for the caller who made it.
 */
export class EventBus {
  private readonly listeners = new Map<EventType, Set<Listener<EventType>>>();

  constructor(private readonly onListenerError: (type: EventType, error: unknown) => void = () => {}) {}

  on<K extends EventType>(type: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener as Listener<EventType>);
    return () => set.delete(listener as Listener<EventType>);
  }

  emit<K extends EventType>(type: K, payload: ServiceEvents[K]): void {
    for (const listener of this.listeners.get(type) ?? []) {
      try {
        listener(payload);
      } catch (error) {
        this.onListenerError(type, error);
      }
    }
  }

  listenerCount(type: EventType): number {
    return this.listeners.get(type)?.size ?? 0;
  }
}
