import type { ReviewRecord } from '../../server';

/** What the shell's modules tell each other. */
export interface DesktopEventPayloads {
  /** A review arrived in the running API (whichever one: the API restarts when LAN access changes). */
  'review.created': ReviewRecord;
  'review.decided': ReviewRecord;
  /** The API started, the first time or again: counts read before may be stale. */
  'api.started': undefined;
  /** The tray, a notification: bring the window forward, on this review if there is one. */
  'window.requested': { reviewId: number | null };
}

type EventName = keyof DesktopEventPayloads;

/** One module asks or tells, others act, and neither holds the other. */
export class DesktopEvents {
  private readonly listeners = new Map<EventName, Array<(payload: never) => void>>();

  on<K extends EventName>(name: K, listener: (payload: DesktopEventPayloads[K]) => void): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener]);
  }

  emit<K extends EventName>(name: K, payload: DesktopEventPayloads[K]): void {
    for (const listener of this.listeners.get(name) ?? []) (listener as (payload: DesktopEventPayloads[K]) => void)(payload);
  }
}
