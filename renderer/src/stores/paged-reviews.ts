import { computed, ref } from 'vue';
import type { ReviewPage, ReviewRecord, ServiceEvents } from '../api/types';
import { explainFailure } from './failures';

type EventApplier = <K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]) => void;

/**
 * A list of reviews read a page at a time and kept current by live events. The first page's
 * answer replaces the list, and it may have been read before events that reached the page
 * while it travelled; those events are applied again on top of it (`apply` must ignore what
 * the list already shows).
 */
export function pagedReviews(options: { read: (page: number) => Promise<ReviewPage>; apply: EventApplier }) {
  const reviews = ref<ReviewRecord[]>([]);
  const total = ref(0);
  const pagesLoaded = ref(0);
  const loading = ref(false);
  const error = ref<string | null>(null);
  const hasMore = computed(() => reviews.value.length < total.value);
  let generation = 0;
  /** The page being read now, for a caller that must wait for it before reading the next. */
  let reading: Promise<void> = Promise.resolve();
  let arrivedDuringFirstPage: Array<[keyof ServiceEvents, unknown]> | null = null;

  async function fetchPage(page: number): Promise<void> {
    const current = ++generation;
    loading.value = true;
    if (page === 1) arrivedDuringFirstPage = [];
    try {
      const result = await options.read(page);
      if (current !== generation) return;
      const known = new Set(page === 1 ? [] : reviews.value.map((r) => r.id));
      reviews.value = page === 1 ? result.reviews : [...reviews.value, ...result.reviews.filter((r) => !known.has(r.id))];
      total.value = result.total;
      pagesLoaded.value = page;
      error.value = null;
      const missed = arrivedDuringFirstPage ?? [];
      arrivedDuringFirstPage = null;
      for (const [type, payload] of missed) options.apply(type, payload as never);
    } catch (failure) {
      if (current !== generation) return;
      arrivedDuringFirstPage = null;
      error.value = explainFailure(failure);
    } finally {
      if (current === generation) loading.value = false;
    }
  }

  function read(page: number): Promise<void> {
    reading = fetchPage(page);
    return reading;
  }

  const load = (): Promise<void> => read(1);

  async function loadMore(): Promise<void> {
    if (loading.value || !hasMore.value) return;
    await read(pagesLoaded.value + 1);
  }

  /**
   * Reads on, page after page, until `found` holds or the list is complete or a read fails:
   * a review far down the list, opened by its address, is listed like the rest.
   */
  async function loadUntil(found: () => boolean): Promise<void> {
    while (!found()) {
      if (loading.value) {
        await reading;
        continue;
      }
      // Not read at all yet (the address was opened before the list): from its first page.
      if ((pagesLoaded.value > 0 && !hasMore.value) || error.value !== null) return;
      await read(pagesLoaded.value + 1);
    }
  }

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    arrivedDuringFirstPage?.push([type, payload]);
    options.apply(type, payload);
  }

  return { reviews, total, pagesLoaded, loading, error, hasMore, load, loadMore, loadUntil, applyEvent };
}
