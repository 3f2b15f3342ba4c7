import { defineStore } from 'pinia';
import { ref } from 'vue';
import { useApi } from '../api';
import type { Statistics } from '../api/types';
import { explainFailure } from './failures';

/** How long live events may accumulate before the figures are fetched again. */
const REFRESH_DELAY_MS = 1_000;

export const useStatisticsStore = defineStore('statistics', () => {
  const figures = ref<Statistics | null>(null);
  const loading = ref(false);
  const error = ref<string | null>(null);
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;

  async function load(): Promise<void> {
    loading.value = true;
    try {
      figures.value = await useApi().statistics();
      error.value = null;
    } catch (failure) {
      error.value = explainFailure(failure);
    } finally {
      loading.value = false;
    }
  }

  /** Called on every review event; a burst of events costs one request. */
  function invalidate(): void {
    if (figures.value === null || refreshTimer) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = undefined;
      void load();
    }, REFRESH_DELAY_MS);
  }

  return { figures, loading, error, load, invalidate };
});
