import { defineStore } from 'pinia';
import { ref } from 'vue';
import { useApi } from '../api';
import type { AttachmentRecord, FeedbackRecord, ServiceEvents } from '../api/types';
import { explainFailure } from './failures';

interface Details {
  attachments: AttachmentRecord[];
  feedback: FeedbackRecord[];
  loading: boolean;
  error: string | null;
}

/** Attachments and feedback of the reviews a reviewer opens, kept current by live events. */
export const useReviewDetailsStore = defineStore('review-details', () => {
  const byReview = ref<Record<number, Details>>({});

  async function open(reviewId: number): Promise<void> {
    if (byReview.value[reviewId] && !byReview.value[reviewId].error) return;
    byReview.value[reviewId] = { attachments: [], feedback: [], loading: true, error: null };
    try {
      const [attachments, feedback] = await Promise.all([useApi().listAttachments(reviewId), useApi().listFeedback(reviewId)]);
      byReview.value[reviewId] = { attachments, feedback, loading: false, error: null };
    } catch (failure) {
      byReview.value[reviewId] = {
        attachments: [],
        feedback: [],
        loading: false,
        error: explainFailure(failure),
      };
    }
  }

  function applyEvent<K extends keyof ServiceEvents>(type: K, payload: ServiceEvents[K]): void {
    if (type === 'feedback.created') {
      const feedback = payload as FeedbackRecord;
      byReview.value[feedback.review_id]?.feedback.push(feedback);
    } else if (type === 'attachment.created') {
      const attachment = payload as AttachmentRecord;
      byReview.value[attachment.review_id]?.attachments.push(attachment);
    } else if (type === 'attachment.deleted') {
      const { id, review_id } = payload as ServiceEvents['attachment.deleted'];
      const details = byReview.value[review_id];
      if (details) details.attachments = details.attachments.filter((a) => a.id !== id);
    }
  }

  return { byReview, open, applyEvent };
});
