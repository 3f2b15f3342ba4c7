import type { FeedbackStore } from '../db/feedback-store';
import { invalidInput, notFound } from './errors';
import type { EventBus } from './events';
import type { FeedbackInput, FeedbackRecord } from './records';

/** Feedback on reviews: how good was the agent's proposal, or the review itself. */
export class FeedbackService {
  constructor(
    private readonly store: FeedbackStore,
    private readonly bus: EventBus,
    private readonly reviewExists: (id: number) => Promise<boolean>,
    private readonly clock: () => number = Date.now,
  ) {}

  async add(reviewId: number, input: FeedbackInput): Promise<FeedbackRecord> {
    if ((input.rating ?? null) === null && (input.comment ?? null) === null) {
      throw invalidInput('rating', 'or comment is required: give a rating from 1 to 5, a comment, or both');
    }
    const feedback = await this.store.insert(reviewId, input, this.clock());
    if (!feedback) throw notFound('review', reviewId);
    this.bus.emit('feedback.created', feedback);
    return feedback;
  }

  async list(reviewId: number): Promise<{ review_id: number; feedback: FeedbackRecord[]; count: number }> {
    if (!(await this.reviewExists(reviewId))) throw notFound('review', reviewId);
    const feedback = await this.store.listFor(reviewId);
    return { review_id: reviewId, feedback, count: feedback.length };
  }
}
