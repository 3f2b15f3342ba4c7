import type { EventFeed } from '../shared/events';
import type { ReviewRecord } from './records';

export type WaitOutcome =
  | { kind: 'decided'; review: ReviewRecord }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'shutdown' };

interface Waiter {
  settle(outcome: WaitOutcome): void;
}

/**
 * Requests waiting for a review's decision: blocking creates and long-polls. The decide path
 * wakes them through the event bus the moment the decision commits; nothing polls. Each
 * waiter is released exactly once — by the decision, its time limit, its client going away,
 * or shutdown — and leaves no timer or listener behind.
 */
export class DecisionWaiters {
  private readonly byReview = new Map<number, Set<Waiter>>();
  private size = 0;
  private closed = false;

  constructor(feed: EventFeed) {
    // Of other processes' decisions, only those of reviews someone here waits on.
    feed.on(
      'review.decided',
      (review) => this.wake(review.id, { kind: 'decided', review }),
      (entry) => entry.type === 'review.decided' && this.byReview.has(entry.review_id),
    );
  }

  /** Waiting requests right now; tests assert on it to prove nothing leaks. */
  get count(): number {
    return this.size;
  }

  wait(reviewId: number, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve({ kind: 'shutdown' });
    if (signal?.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise((resolve) => {
      const onAbort = (): void => waiter.settle({ kind: 'aborted' });
      const timer = setTimeout(() => waiter.settle({ kind: 'timeout' }), timeoutMs);
      const waiter: Waiter = {
        settle: (outcome) => {
          if (!this.remove(reviewId, waiter)) return;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.add(reviewId, waiter);
    });
  }

  /** The reviews someone is waiting on: what to re-check when events may have been missed. */
  waitedReviews(): number[] {
    return [...this.byReview.keys()];
  }

  /** Releases a review's waiters, e.g. when a re-check finds the decision already stored. */
  wake(reviewId: number, outcome: WaitOutcome): void {
    for (const waiter of [...(this.byReview.get(reviewId) ?? [])]) waiter.settle(outcome);
  }

  /** Answers every waiter with `shutdown` and refuses new ones. */
  shutdown(): void {
    this.closed = true;
    for (const reviewId of [...this.byReview.keys()]) this.wake(reviewId, { kind: 'shutdown' });
  }

  private add(reviewId: number, waiter: Waiter): void {
    let set = this.byReview.get(reviewId);
    if (!set) {
      set = new Set();
      this.byReview.set(reviewId, set);
    }
    set.add(waiter);
    this.size += 1;
  }

  private remove(reviewId: number, waiter: Waiter): boolean {
    const set = this.byReview.get(reviewId);
    if (!set?.delete(waiter)) return false;
    if (set.size === 0) this.byReview.delete(reviewId);
    this.size -= 1;
    return true;
  }
}
