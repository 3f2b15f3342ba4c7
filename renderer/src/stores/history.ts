import { defineStore } from 'pinia';
import { useApi } from '../api';
import type { ReviewRecord, ServiceEvents } from '../api/types';
import { pagedReviews } from './paged-reviews';

const PAGE_SIZE = 50;

/** Decided reviews, latest decision first. */
export const useHistoryStore = defineStore('history', () => {
  const list = pagedReviews({
    read: (page) => useApi().listReviews({ decided: true, sort: 'recently_decided', page, page_size: PAGE_SIZE }),
    apply: receive,
  });

  function receive<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type !== 'review.decided' || list.pagesLoaded.value === 0) return;
    const review = payload as ReviewRecord;
    if (list.reviews.value.some((r) => r.id === review.id)) return;
    list.reviews.value.unshift(review);
    list.total.value += 1;
  }

  return list;
});
