import { AppError, notFound } from '../shared/errors';
import { INSTALLATION, type Scope } from '../shared/principal';
import type { ReviewRepository } from './ports';
import type { DecisionWaiters, WaitOutcome } from './waiters';

/** How soon a client refused for want of waiting room should try again. */
const WAITING_ROOM_RETRY_SECONDS = 5;

export interface WaitForDecisionOptions {
  reviews: Pick<ReviewRepository, 'findById'>;
  waiters: DecisionWaiters;
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
}

/**
 * Waiting for a review's decision: a blocking create, a long-poll, an MCP call. Waits are pushed
 * their decision (no polling), and bounded in number, since each holds a connection and memory.
 */
export class WaitForDecision {
  private readonly maxWaiting: number;

  constructor(private readonly options: WaitForDecisionOptions) {
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Refuses (503) a request that would wait when `max_waiting_requests` already do: each holds
   * a connection and memory until its decision.
   */
  checkRoom(): void {
    if (!this.roomFull()) return;
    throw new AppError(503, `${this.options.waiters.count} requests are already waiting for decisions (max_waiting_requests); retry later, or create without blocking and ask for the decision later`, {
      retry_after_seconds: WAITING_ROOM_RETRY_SECONDS,
    });
  }

  roomFull(): boolean {
    return this.options.waiters.count >= this.maxWaiting;
  }

  /**
   * Waits until the review is decided, `timeoutMs` passes, `signal` aborts or the service
   * shuts down. Subscribes before reading the row, so a decision that commits in between is
   * caught either by the read or by the event.
   */
  async wait(scope: Scope, reviewId: number, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    const { waiters, reviews } = this.options;
    const outcome = waiters.wait(reviewId, timeoutMs, signal);
    const current = await reviews.findById(scope, reviewId);
    if (!current) {
      waiters.wake(reviewId, { kind: 'aborted' });
      throw notFound('review', reviewId);
    }
    if (current.decision) waiters.wake(reviewId, { kind: 'decided', review: current });
    return outcome;
  }

  /**
   * Re-reads every review a request waits on and answers those decided: after events may have
   * been missed (another process's, while the connection that brings them was down).
   */
  async recheckWaiting(): Promise<void> {
    const { waiters, reviews } = this.options;
    for (const reviewId of waiters.waitedReviews()) {
      const review = await reviews.findById(INSTALLATION, reviewId);
      if (review?.decision) waiters.wake(reviewId, { kind: 'decided', review });
    }
  }
}
