import { computed, type ComputedRef, ref, type Ref, watch } from 'vue';
import { useApi } from '../api';
import { ApiError } from '../api/client';
import type { ReviewRecord } from '../api/types';
import { explainFailure } from '../stores/failures';
import { useQueueStore } from '../stores/queue';
import type { HashRoute } from './useHashRoute';

/** The review `#/reviews/<id>` names, as far as the dashboard has found it. */
export type AddressedReview =
  | { kind: 'none' }
  | { kind: 'opening'; id: number }
  /** Listed in the queue (pending, or of the status its filter shows): opened there. */
  | { kind: 'queue'; id: number }
  | { kind: 'decided'; review: ReviewRecord }
  /** No such review, or one of another organization: the API answers alike (404). */
  | { kind: 'missing'; id: number | null }
  | { kind: 'failed'; id: number; message: string };

/**
 * `#/reviews/<id>` opens that review — in the queue's detail while it is listed or pending, on
 * a page of its own once decided — and the address follows the review the queue shows: the
 * reviewer's moves (`j`, `k`, a click) add an entry to the browser's history, so Back returns
 * to the review before; the queue's own moves (the first review on opening, the next one after
 * a decision) replace the address, so Back never leads to a review that has left.
 */
export function useReviewAddress(
  route: HashRoute,
  inside: Ref<boolean>,
): { addressed: Ref<AddressedReview>; showsQueue: ComputedRef<boolean>; retry: () => void } {
  const queue = useQueueStore();
  const addressed = ref<AddressedReview>({ kind: 'none' });
  const addressedId = computed<number | null | 'invalid'>(() => {
    if (route.view.value !== 'reviews') return null;
    return /^[1-9]\d{0,9}$/.test(route.detail.value) ? Number(route.detail.value) : 'invalid';
  });
  const inQueue = (id: number): boolean => queue.shown.some((r) => r.id === id) || queue.outcomes[id] !== undefined;
  const showsQueue = computed(() => route.view.value === 'queue' || (route.view.value === 'reviews' && addressed.value.kind === 'queue'));

  async function open(id: number): Promise<void> {
    if (inQueue(id)) {
      queue.select(id);
      addressed.value = { kind: 'queue', id };
      return;
    }
    addressed.value = { kind: 'opening', id };
    const stillAddressed = (): boolean => addressedId.value === id;
    try {
      const review = await useApi().getReview(id);
      if (!stillAddressed()) return;
      if (review.status === 'pending') {
        await queue.reveal(id);
        if (stillAddressed()) addressed.value = { kind: 'queue', id };
      } else {
        addressed.value = { kind: 'decided', review };
      }
    } catch (failure) {
      if (!stillAddressed()) return;
      addressed.value = failure instanceof ApiError && failure.status === 404 ? { kind: 'missing', id } : { kind: 'failed', id, message: explainFailure(failure) };
    }
  }

  function follow(): void {
    const id = addressedId.value;
    if (id === null) addressed.value = { kind: 'none' };
    else if (id === 'invalid') addressed.value = { kind: 'missing', id: null };
    else if (inside.value) void open(id);
  }
  watch([addressedId, inside, route.arrivals], follow, { immediate: true });

  // Back in the queue from another view, too: the address names the review it shows.
  watch(
    [() => queue.selectedId, showsQueue],
    ([id, shown]) => {
      if (id === null || !shown) return;
      const named = addressedId.value;
      if (named === id) return;
      const movedAway = typeof named === 'number' && queue.shown.some((r) => r.id === named);
      route.goToReview(id, { replace: !movedAway });
    },
  );

  return { addressed, showsQueue, retry: follow };
}
