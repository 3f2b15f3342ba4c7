import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { useApi } from '../api';
import type { ReviewRecord, ServiceEvents } from '../api/types';
import { useNow } from '../composables/useNow';

/** As many reviews as one page of the API holds: past them the header counts what the API totals. */
const PAGE_SIZE = 100;

/**
 * The reviews agents are waiting on right now, for the header's count: read with
 * `GET /reviews?waiting=true`, then kept current by `review.waiting` and `review.decided`.
 * A wait whose time has passed stops counting on the shared clock, before any event says so.
 */
export const useWaitingAgentsStore = defineStore('waiting-agents', () => {
  const untilById = ref(new Map<number, number>());
  /** Waited-on reviews beyond the first page read: counted, not followed. */
  const unlisted = ref(0);
  const now = useNow();

  const count = computed(() => {
    let waiting = unlisted.value;
    for (const until of untilById.value.values()) if (until > now.value) waiting += 1;
    return waiting;
  });

  async function refresh(): Promise<void> {
    try {
      const page = await useApi().listReviews({ status: 'pending', waiting: true, page_size: PAGE_SIZE });
      untilById.value = new Map(page.reviews.filter((review) => review.waiting_until).map((review) => [review.id, Date.parse(review.waiting_until!)]));
      unlisted.value = Math.max(0, page.total - page.reviews.length);
    } catch {
      // The queue reports connection problems; the count keeps its last value.
    }
  }

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type !== 'review.waiting' && type !== 'review.decided') return;
    const review = payload as ReviewRecord;
    const next = new Map(untilById.value);
    if (review.waiting_until && review.status === 'pending') next.set(review.id, Date.parse(review.waiting_until));
    else next.delete(review.id);
    untilById.value = next;
  }

  return { count, refresh, applyEvent };
});
