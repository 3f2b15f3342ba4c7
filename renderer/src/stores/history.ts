import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { useApi } from '../api';
import type { ReviewRecord, ServiceEvents } from '../api/types';
import { explainFailure } from './failures';

const PAGE_SIZE = 50;

/** Decided reviews, latest decision first. */
export const useHistoryStore = defineStore('history', () => {
  const reviews = ref<ReviewRecord[]>([]);
  const total = ref(0);
  const pagesLoaded = ref(0);
  const loading = ref(false);
  const error = ref<string | null>(null);
  const hasMore = computed(() => reviews.value.length < total.value);

  async function fetchPage(page: number): Promise<void> {
    loading.value = true;
    try {
      const result = await useApi().listReviews({ decided: true, sort: 'recently_decided', page, page_size: PAGE_SIZE });
      const known = new Set(page === 1 ? [] : reviews.value.map((r) => r.id));
      reviews.value = page === 1 ? result.reviews : [...reviews.value, ...result.reviews.filter((r) => !known.has(r.id))];
      total.value = result.total;
      pagesLoaded.value = page;
      error.value = null;
    } catch (failure) {
      error.value = explainFailure(failure);
    } finally {
      loading.value = false;
    }
  }

  const load = (): Promise<void> => fetchPage(1);
  const loadMore = (): Promise<void> => (hasMore.value && !loading.value ? fetchPage(pagesLoaded.value + 1) : Promise.resolve());

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type !== 'review.decided' || pagesLoaded.value === 0) return;
    const review = payload as ReviewRecord;
    if (reviews.value.some((r) => r.id === review.id)) return;
    reviews.value.unshift(review);
    total.value += 1;
  }

  return { reviews, total, loading, error, hasMore, load, loadMore, applyEvent };
});
