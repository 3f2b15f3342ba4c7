import { defineStore } from 'pinia';
import { ref } from 'vue';
import { UnauthorizedError } from '../api/client';
import { useApi } from '../api';
import type { EventType, ServiceEvents } from '../api/types';
import { useAlertsStore } from './alerts';
import { useHistoryStore } from './history';
import { usePendingCountsStore } from './pending-counts';
import { useQueueStore } from './queue';
import { useReviewDetailsStore } from './review-details';
import { useSessionStore } from './session';
import { useStatisticsStore } from './statistics';
import { useWaitingAgentsStore } from './waiting-agents';

export type LiveStatus = 'offline' | 'connecting' | 'live' | 'reconnecting';

const MAX_BACKOFF_MS = 10_000;
/**
 * How long the lists wait for the stream before they are read without it: a proxy that holds
 * the stream back must not leave the reviewer looking at an empty page.
 */
const READ_WITHOUT_STREAM_AFTER_MS = 2_000;

/**
 * The dashboard's one connection to `GET /events`, and what the dashboard shows is read
 * through it. Events are not replayed, so every time the stream opens — the first time too —
 * the lists and counts are read again: a review created or decided before the stream was
 * listening is then in the answer, and one that happens later arrives as an event. If the
 * stream cannot open, the lists are read once without it, so the page is not empty.
 */
export const useLiveStore = defineStore('live', () => {
  const status = ref<LiveStatus>('offline');
  let controller: AbortController | undefined;

  function dispatch<K extends EventType>(type: K, payload: ServiceEvents[K]): void {
    useQueueStore().applyEvent(type, payload);
    useHistoryStore().applyEvent(type, payload);
    useReviewDetailsStore().applyEvent(type, payload);
    usePendingCountsStore().applyEvent(type, payload);
    useWaitingAgentsStore().applyEvent(type, payload);
    // An agent starting or stopping a wait changes no figure.
    if (type !== 'review.waiting') useStatisticsStore().invalidate();
    useAlertsStore().applyEvent(type, payload);
  }

  function readEverything(): void {
    void useQueueStore().load();
    void usePendingCountsStore().refresh();
    void useWaitingAgentsStore().refresh();
    void useStatisticsStore().load();
    const history = useHistoryStore();
    if (history.pagesLoaded > 0) void history.load();
  }

  async function run(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    let shown = false;
    const showWithoutStream = (): void => {
      if (shown || signal.aborted) return;
      shown = true;
      readEverything();
    };
    while (!signal.aborted) {
      status.value = attempt === 0 ? 'connecting' : 'reconnecting';
      const slowOpen = shown ? undefined : setTimeout(showWithoutStream, READ_WITHOUT_STREAM_AFTER_MS);
      try {
        await useApi().streamEvents(
          {
            onOpen: () => {
              clearTimeout(slowOpen);
              status.value = 'live';
              shown = true;
              readEverything();
              attempt = 0;
            },
            onEvent: dispatch,
          },
          signal,
        );
      } catch (failure) {
        clearTimeout(slowOpen);
        if (signal.aborted) break;
        if (failure instanceof UnauthorizedError) {
          useSessionStore().refused(failure.keySent);
          break;
        }
        showWithoutStream();
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
   * (Re)connects with the session's current key, and reads everything again once connected.
   * A connection still in flight is dropped, not kept: it may have been opened with a key the
   * reviewer has since replaced, and its 401 would then end the loop while the new key goes
   * unused.
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
