import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { AlreadyDecidedError } from '../api/client';
import { useApi } from '../api';
import type { DecisionInput, DecisionRecord, ReviewFilters, ReviewRecord, ServiceEvents } from '../api/types';
import { matchesFilters, placeInOrder } from './review-list';
import { explainFailure } from './failures';

const PAGE_SIZE = 100;

export type QueueFilters = Omit<ReviewFilters, 'decided'>;

/** What became of a review the reviewer acted on, shown in place of the decision buttons. */
export type Outcome =
  | { kind: 'decided'; decision: DecisionRecord }
  | { kind: 'lost-race'; decision: DecisionRecord }
  | { kind: 'decided-elsewhere'; decision: DecisionRecord };

/**
 * The reviewer's queue: pending reviews (or another status, by filter), most urgent and
 * oldest first, loaded a page at a time and kept current by live events.
 */
export const useQueueStore = defineStore('queue', () => {
  const reviews = ref<ReviewRecord[]>([]);
  const total = ref(0);
  const filters = ref<QueueFilters>({ status: 'pending' });
  const pagesLoaded = ref(0);
  const loading = ref(false);
  const error = ref<string | null>(null);
  const selectedId = ref<number | null>(null);
  /** Reviews the reviewer was looking at when they were decided, by id. */
  const outcomes = ref<Record<number, { review: ReviewRecord; outcome: Outcome }>>({});
  const deciding = ref<Record<number, boolean>>({});
  /** A short confirmation of the last decision, announced to screen readers too. */
  const notice = ref<string | null>(null);

  const order = computed(() => (filters.value.status === 'pending' ? 'priority' : 'newest'));
  const hasMore = computed(() => reviews.value.length < total.value);
  const selected = computed<ReviewRecord | null>(
    () => reviews.value.find((r) => r.id === selectedId.value) ?? outcomes.value[selectedId.value ?? -1]?.review ?? null,
  );
  const selectedOutcome = computed(() => outcomes.value[selectedId.value ?? -1]?.outcome ?? null);

  let generation = 0;
  /** Events that arrive while the first page loads, applied again once it has replaced the list. */
  let arrivedDuringLoad: Array<[keyof ServiceEvents, unknown]> | null = null;

  function report(failure: unknown): void {
    error.value = explainFailure(failure);
  }

  async function fetchPage(page: number): Promise<void> {
    const current = ++generation;
    loading.value = true;
    if (page === 1) arrivedDuringLoad = [];
    try {
      const result = await useApi().listReviews({ ...filters.value, sort: order.value, page, page_size: PAGE_SIZE });
      if (current !== generation) return;
      const known = new Set(page === 1 ? [] : reviews.value.map((r) => r.id));
      reviews.value = page === 1 ? result.reviews : [...reviews.value, ...result.reviews.filter((r) => !known.has(r.id))];
      total.value = result.total;
      pagesLoaded.value = page;
      error.value = null;
      const missed = arrivedDuringLoad ?? [];
      arrivedDuringLoad = null;
      for (const [type, payload] of missed) apply(type, payload as never);
      if (selectedId.value === null && reviews.value.length > 0) selectedId.value = reviews.value[0].id;
    } catch (failure) {
      if (current === generation) report(failure);
    } finally {
      if (current === generation) loading.value = false;
    }
  }

  const load = (): Promise<void> => fetchPage(1);

  async function loadMore(): Promise<void> {
    if (loading.value || !hasMore.value) return;
    await fetchPage(pagesLoaded.value + 1);
  }

  async function setFilters(next: QueueFilters): Promise<void> {
    filters.value = { ...next };
    selectedId.value = null;
    await load();
  }

  function select(id: number | null): void {
    selectedId.value = id;
  }

  /** Shows one review (a notification was clicked), clearing filters that would hide it. */
  async function reveal(id: number): Promise<void> {
    if (!reviews.value.some((r) => r.id === id) && (Object.keys(filters.value).length > 1 || filters.value.status !== 'pending')) {
      await setFilters({ status: 'pending' });
    }
    selectedId.value = id;
  }

  function move(step: 1 | -1): void {
    const list = reviews.value;
    if (list.length === 0) return;
    const index = list.findIndex((r) => r.id === selectedId.value);
    const next = index < 0 ? 0 : Math.min(list.length - 1, Math.max(0, index + step));
    selectedId.value = list[next].id;
    if (step === 1 && next >= list.length - 5) void loadMore();
  }

  function remove(id: number): number {
    const index = reviews.value.findIndex((r) => r.id === id);
    if (index >= 0) {
      reviews.value.splice(index, 1);
      total.value = Math.max(0, total.value - 1);
    }
    return index;
  }

  function receiveCreated(review: ReviewRecord): void {
    if (!matchesFilters(review, filters.value) || reviews.value.some((r) => r.id === review.id)) return;
    placeInOrder(reviews.value, review, order.value, hasMore.value);
    total.value += 1;
    if (selectedId.value === null) selectedId.value = review.id;
  }

  function receiveDecided(review: ReviewRecord): void {
    const index = reviews.value.findIndex((r) => r.id === review.id);
    const wasShown = index >= 0;
    if (wasShown && !deciding.value[review.id]) {
      // Decided by someone else while the reviewer may be looking at it.
      if (selectedId.value === review.id) {
        outcomes.value[review.id] = { review, outcome: { kind: 'decided-elsewhere', decision: review.decision! } };
      }
      remove(review.id);
    }
    if (!wasShown && matchesFilters(review, filters.value)) {
      placeInOrder(reviews.value, review, order.value, hasMore.value);
      total.value += 1;
    }
  }

  function apply<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type === 'review.created') receiveCreated(payload as ReviewRecord);
    if (type === 'review.decided') receiveDecided(payload as ReviewRecord);
  }

  /** Applies a live event; the same events arrive for every reviewer's dashboard. */
  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    arrivedDuringLoad?.push([type, payload]);
    apply(type, payload);
  }

  /**
   * Decides optimistically: the review leaves the queue at once and the next one is selected;
   * if the server refuses, it comes back with the reason. A lost race (409) is an outcome,
   * shown with the decision that stands, not an error.
   */
  async function decide(id: number, input: DecisionInput): Promise<void> {
    const review = reviews.value.find((r) => r.id === id) ?? outcomes.value[id]?.review;
    if (!review || deciding.value[id]) return;
    deciding.value[id] = true;
    const position = reviews.value.indexOf(review);
    const wasSelected = selectedId.value === id;
    if (position >= 0) {
      remove(id);
      if (wasSelected) selectedId.value = reviews.value[Math.min(position, reviews.value.length - 1)]?.id ?? null;
    }
    try {
      const decision = await useApi().decide(id, input);
      outcomes.value[id] = { review: { ...review, decision, status: statusAfter(decision) }, outcome: { kind: 'decided', decision } };
      notice.value = `${PAST_TENSE[decision.decision_type]} review #${id} (${review.task_type})`;
    } catch (failure) {
      if (failure instanceof AlreadyDecidedError) {
        outcomes.value[id] = {
          review: { ...review, decision: failure.decision, status: statusAfter(failure.decision) },
          outcome: { kind: 'lost-race', decision: failure.decision },
        };
        selectedId.value = id;
      } else {
        if (position >= 0) {
          reviews.value.splice(Math.min(position, reviews.value.length), 0, review);
          total.value += 1;
        }
        selectedId.value = id;
        report(failure);
        throw failure;
      }
    } finally {
      delete deciding.value[id];
    }
  }

  function dismissOutcome(id: number): void {
    delete outcomes.value[id];
    if (selectedId.value === id) selectedId.value = reviews.value[0]?.id ?? null;
  }

  return {
    reviews,
    total,
    filters,
    loading,
    error,
    selectedId,
    selected,
    selectedOutcome,
    outcomes,
    deciding,
    notice,
    hasMore,
    order,
    load,
    loadMore,
    setFilters,
    select,
    reveal,
    move,
    applyEvent,
    decide,
    dismissOutcome,
  };
});

const PAST_TENSE = { approve: 'Approved', reject: 'Rejected', modify: 'Approved with changes' } as const;

function statusAfter(decision: DecisionRecord): ReviewRecord['status'] {
  return ({ approve: 'approved', reject: 'rejected', modify: 'modified' } as const)[decision.decision_type];
}
