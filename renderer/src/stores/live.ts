import { defineStore } from 'pinia';
import { ref } from 'vue';
import { UnauthorizedError } from '../api/client';
import { useApi } from '../api';
import type { EventType, ServiceEvents } from '../api/types';
import { useAlertsStore } from './alerts';
import { useHistoryStore } from './history';
import { useQueueStore } from './queue';
import { useReviewDetailsStore } from './review-details';
import { useSessionStore } from './session';
import { useStatisticsStore } from './statistics';

export type LiveStatus = 'offline' | 'connecting' | 'live' | 'reconnecting';

const MAX_BACKOFF_MS = 10_000;

/**
 * The dashboard's one connection to `GET /events`. Every event goes to every store; after a
 * reconnect the lists are re-read, since events missed meanwhile are not replayed.
 */
export const useLiveStore = defineStore('live', () => {
  const status = ref<LiveStatus>('offline');
  let controller: AbortController | undefined;

  function dispatch<K extends EventType>(type: K, payload: ServiceEvents[K]): void {
    useQueueStore().applyEvent(type, payload);
    useHistoryStore().applyEvent(type, payload);
    useReviewDetailsStore().applyEvent(type, payload);
    useStatisticsStore().invalidate();
    useAlertsStore().applyEvent(type, payload);
  }

  function catchUp(): void {
    void useQueueStore().load();
    void useAlertsStore().refresh();
    const history = useHistoryStore();
    if (history.reviews.length > 0) void history.load();
    useStatisticsStore().invalidate();
  }

  async function run(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      status.value = attempt === 0 ? 'connecting' : 'reconnecting';
      try {
        await useApi().streamEvents(
          {
            onOpen: () => {
              status.value = 'live';
              if (attempt > 0) catchUp();
              attempt = 0;
            },
            onEvent: dispatch,
          },
          signal,
        );
      } catch (failure) {
        if (signal.aborted) break;
        if (failure instanceof UnauthorizedError) {
          useSessionStore().refused(failure.keySent);
          break;
        }
      }
      if (signal.aborted) break;
      attempt += 1;
      status.value = 'reconnecting';
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, MAX_BACKOFF_MS)));
    }
    // An aborted run has been stopped or replaced; the status is no longer its to tell.
    if (!signal.aborted) status.value = 'offline';
  }

  /**
   * (Re)connects with the session's current key. A connection still in flight is dropped, not
   * kept: it may have been opened with a key the reviewer has since replaced, and its 401 would
   * then end the loop while the new key goes unused.
   */
  function start(): void {
    controller?.abort();
    const current = new AbortController();
    controller = current;
    void run(current.signal).finally(() => {
      if (controller === current) controller = undefined;
    });
  }

  function stop(): void {
    controller?.abort();
    controller = undefined;
    status.value = 'offline';
  }

  return { status, start, stop, dispatch };
});
