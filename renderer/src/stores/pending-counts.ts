import { defineStore } from 'pinia';
import { computed } from 'vue';
import { useApi } from '../api';
import { URGENCY_ORDER, type ReviewRecord, type ServiceEvents, type Urgency } from '../api/types';
import { liveCount } from './live-count';
import { decidedOnArrival } from './review-list';

/**
 * How many reviews are pending, per urgency: the header's count, the critical banner and the
 * queue's urgency counts all read this one source, so they never disagree. `/stats` counts
 * reviews of every status per urgency, so each urgency's pending count is read on its own
 * (`GET /reviews?status=pending&urgency=…&page_size=1`, answered from the tallies).
 */
export const usePendingCountsStore = defineStore('pending-counts', () => {
  const counts = Object.fromEntries(
    URGENCY_ORDER.map((urgency) => [
      urgency,
      liveCount(async () => (await useApi().listReviews({ status: 'pending', urgency, page_size: 1 })).total),
    ]),
  ) as Record<Urgency, ReturnType<typeof liveCount>>;

  const byUrgency = computed(() => Object.fromEntries(URGENCY_ORDER.map((urgency) => [urgency, counts[urgency].value.value])) as Record<Urgency, number>);
  const total = computed(() => URGENCY_ORDER.reduce((sum, urgency) => sum + byUrgency.value[urgency], 0));
  const known = computed(() => URGENCY_ORDER.every((urgency) => counts[urgency].known.value));

  async function refresh(): Promise<void> {
    try {
      await Promise.all(URGENCY_ORDER.map((urgency) => counts[urgency].refresh()));
    } catch {
      // The queue reports connection problems; the counts keep their last values.
    }
  }

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    const review = payload as ReviewRecord;
    if (type === 'review.created' && review.status === 'pending') counts[review.urgency].add(1);
    // A routing rule's automatic decision arrives with the review, which was never pending.
    if (type === 'review.decided' && !decidedOnArrival(review)) counts[review.urgency].add(-1);
  }

  return { byUrgency, total, known, refresh, applyEvent };
});
