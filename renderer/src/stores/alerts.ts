import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { ReviewRecord, ServiceEvents } from '../api/types';
import { desktopBridge } from '../desktop';
import { revealPlain } from '../text/reveal';

type Permission = NotificationPermission | 'unsupported';

function currentPermission(): Permission {
  return typeof Notification === 'undefined' || desktopBridge() ? 'unsupported' : Notification.permission;
}

/**
 * A browser notification for each new critical review while the dashboard is in a hidden
 * tab — only once the person has allowed notifications. (How many wait is the pending
 * counts' business.)
 */
export const useAlertsStore = defineStore('alerts', () => {
  const permission = ref<Permission>(currentPermission());
  /** The review a notification click asked to open. */
  const requestedReview = ref<number | null>(null);

  async function askPermission(): Promise<void> {
    if (permission.value === 'unsupported') return;
    permission.value = await Notification.requestPermission();
  }

  function notify(review: ReviewRecord): void {
    // The desktop app raises native notifications itself, from the server's own events.
    if (desktopBridge()) return;
    if (permission.value !== 'granted' || typeof document === 'undefined' || !document.hidden) return;
    // Notifications cannot mark anything: hidden characters are written out as ⟦U+202E⟧.
    const notification = new Notification(`Critical review: ${revealPlain(review.task_type, { oneLine: true })}`, {
      body: revealPlain(review.proposed_action, { oneLine: true, limit: 140 }),
      tag: `greenlight-review-${review.id}`,
    });
    notification.onclick = () => {
      window.focus();
      requestedReview.value = review.id;
      notification.close();
    };
  }

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    const review = payload as ReviewRecord;
    // A routing rule's automatic decision arrives with the review: nobody needs alerting.
    if (type === 'review.created' && review.urgency === 'critical' && review.status === 'pending') notify(review);
  }

  return { permission, requestedReview, askPermission, applyEvent };
});
