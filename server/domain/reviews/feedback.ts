import { invalidInput, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import type { Clock, UnitOfWork } from '../shared/unit-of-work';
import type { FeedbackRepository, ReviewRepository } from './ports';
import type { Principal, Scope } from '../shared/principal';
import type { FeedbackInput, FeedbackRecord } from './records';

/** Feedback on reviews: how good was the agent's proposal, or the review itself. */
export class FeedbackService {
  constructor(
    private readonly feedback: FeedbackRepository,
    private readonly reviews: Pick<ReviewRepository, 'exists'>,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock = Date.now,
  ) {}

  async add(principal: Principal, reviewId: number, input: FeedbackInput): Promise<FeedbackRecord> {
    refuseNul(input);
    if ((input.rating ?? null) === null && (input.comment ?? null) === null) {
      throw invalidInput('rating', 'or comment is required: give a rating from 1 to 5, a comment, or both');
    }
    const now = this.clock();
    const feedback = await this.unitOfWork.run(async (tx) => {
      const stored = await this.feedback.insert(tx, principal.scope, reviewId, input, now);
      if (stored) tx.record(domainEvent('feedback.created', stored.review, stored.record));
      return stored?.record ?? null;
    }, { by: principal });
    if (!feedback) throw notFound('review', reviewId);
    return feedback;
  }

  async list(scope: Scope, reviewId: number): Promise<{ review_id: number; feedback: FeedbackRecord[]; count: number }> {
    if (!(await this.reviews.exists(scope, reviewId))) throw notFound('review', reviewId);
    const feedback = await this.feedback.listFor(scope, reviewId);
    return { review_id: reviewId, feedback, count: feedback.length };
  }
}
