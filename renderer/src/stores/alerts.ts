import { defineStore } from 'pinia';
import { ref } from 'vue';
import { useApi } from '../api';
import type { ReviewRecord, ServiceEvents } from '../api/types';
import { desktopBridge } from '../desktop';

type Permission = NotificationPermission | 'unsupported';

function currentPermission(): Permission {
  return typeof Notification === 'undefined' || desktopBridge() ? 'unsupported' : Notification.permission;
}

function decidedByRuleOnArrival(review: ReviewRecord): boolean {
  return review.routing_rule !== null && review.decision?.reviewer_name === `rule:${review.routing_rule}`;
}

/**
 * Critical-urgency reviews: how many wait, and a browser notification for each new one while
 * the dashboard is in a hidden tab — only once the person has allowed notifications.
 */
export const useAlertsStore = defineStore('alerts', () => {
  const criticalPending = ref(0);
  const permission = ref<Permission>(currentPermission());
  /** The review a notification click asked to open. */
  const requestedReview = ref<number | null>(null);

  async function refresh(): Promise<void> {
    try {
      criticalPending.value = (await useApi().listReviews({ status: 'pending', urgency: 'critical', page_size: 1 })).total;
    } catch {
      // The queue reports connection problems; the banner just keeps its last count.
    }
  }

  async function askPermission(): Promise<void> {
    if (permission.value === 'unsupported') return;
    permission.value = await Notification.requestPermission();
  }

  function notify(review: ReviewRecord): void {
    // The desktop app raises native notifications itself, from the server's own events.
    if (desktopBridge()) return;
    if (permission.value !== 'granted' || typeof document === 'undefined' || !document.hidden) return;
    const notification = new Notification(`Critical review: ${review.task_type}`, {
      body: review.proposed_action.slice(0, 140),
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
    if (review.urgency !== 'critical' || decidedByRuleOnArrival(review)) return;
    if (type === 'review.created') {
      criticalPending.value += 1;
      notify(review);
    } else if (type === 'review.decided') {
      criticalPending.value = Math.max(0, criticalPending.value - 1);
    }
  }

  return { criticalPending, permission, requestedReview, refresh, askPermission, applyEvent };
});
