import type { ReviewStore } from '../db/review-store';
import { AppError, invalidInput, notFound } from './errors';
import type { EventBus } from './events';
import type {
  DecisionInput,
  DecisionRecord,
  ReviewFilters,
  ReviewInput,
  ReviewOrder,
  ReviewPage,
  ReviewRecord,
} from './records';
import type { DecisionWaiters, WaitOutcome } from './waiters';
import { expiryTime, type Policy, routeReview } from './policy';

export interface ReviewServiceOptions {
  store: ReviewStore;
  bus: EventBus;
  waiters: DecisionWaiters;
  /** The policy in force now (it can be reloaded while the service runs). */
  policy: () => Policy;
  clock?: () => number;
}

/** The review lifecycle: create, read, decide, and wait for a decision. */
export class ReviewService {
  private readonly store: ReviewStore;
  private readonly bus: EventBus;
  private readonly waiters: DecisionWaiters;
  private readonly clock: () => number;
  private readonly policy: () => Policy;

  constructor(options: ReviewServiceOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.waiters = options.waiters;
    this.policy = options.policy;
    this.clock = options.clock ?? Date.now;
  }

  /** Stores the review where the policy routes it; a rule's automatic decision is published like any other. */
  async create(input: ReviewInput): Promise<ReviewRecord> {
    const now = this.clock();
    const policy = this.policy();
    const placement = { routing: routeReview(policy, input), expiresAt: expiryTime(policy, input.urgency ?? 'medium', now) };
    const review = await this.store.insert(input, now, placement);
    this.bus.emit('review.created', review);
    if (review.decision) this.bus.emit('review.decided', review);
    return review;
  }

  async get(id: number): Promise<ReviewRecord> {
    const review = await this.store.findById(id);
    if (!review) throw notFound('review', id);
    return review;
  }

  async list(filters: ReviewFilters, page: number, pageSize: number, order: ReviewOrder = 'newest'): Promise<ReviewPage> {
    const { reviews, total } = await this.store.list(filters, page, pageSize, order);
    return { reviews, total, page, page_size: pageSize };
  }

  async decide(reviewId: number, input: DecisionInput): Promise<DecisionRecord> {
    checkDecisionShape(input);
    const result = await this.store.recordDecision(reviewId, input, this.clock());
    switch (result.outcome) {
      case 'not_found':
        throw notFound('review', reviewId);
      case 'already_decided':
        throw new AppError(409, `review ${reviewId} has already been decided (${result.review.status})`, {
          review_id: reviewId,
          decision: result.review.decision,
        });
      case 'recorded':
        this.bus.emit('review.decided', result.review);
        return result.review.decision as DecisionRecord;
    }
  }

  /** The decision, or null while the review is pending. */
  async decision(reviewId: number): Promise<DecisionRecord | null> {
    return (await this.get(reviewId)).decision;
  }

  /**
   * Waits until the review is decided, `timeoutMs` passes, `signal` aborts or the service
   * shuts down. Subscribes before reading the row, so a decision that commits in between is
   * caught either by the read or by the event.
   */
  async waitForDecision(reviewId: number, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    const outcome = this.waiters.wait(reviewId, timeoutMs, signal);
    const current = await this.store.findById(reviewId);
    if (!current) {
      this.waiters.wake(reviewId, { kind: 'aborted' });
      throw notFound('review', reviewId);
    }
    if (current.decision) this.waiters.wake(reviewId, { kind: 'decided', review: current });
    return outcome;
  }
}

/** Rules the schema cannot express: what `modified_action` means depends on the type. */
function checkDecisionShape(input: DecisionInput): void {
  const modified = input.modified_action ?? null;
  if (input.decision_type === 'modify' && (modified === null || modified.trim() === '')) {
    throw invalidInput('modified_action', 'is required (non-empty) when decision_type is modify');
  }
  if (input.decision_type !== 'modify' && modified !== null) {
    throw invalidInput('modified_action', `is only used with decision_type modify, not ${input.decision_type}`);
  }
}
