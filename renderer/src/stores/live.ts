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
    status.value = 'offline';
  }

  function start(): void {
    if (controller) return;
    const current = new AbortController();
    controller = current;
    void run(current.signal).finally(() => {
      if (controller === current) controller = undefined;
    });
  }

  function stop(): void {
    controller?.abort();
    controller = undefined;
  }

  return { status, start, stop, dispatch };
});
