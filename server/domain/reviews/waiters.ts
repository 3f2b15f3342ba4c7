import type { EventFeed } from '../shared/events';
import type { ReviewRecord } from './records';

export type WaitOutcome =
  | { kind: 'decided'; review: ReviewRecord }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'shutdown' };

/**
 * What ends a wait early: its caller going away. An `AbortSignal` is one; the API passes one
 * far smaller (`http/waiting.ts`), since thousands of agents may be waiting at once.
 */
export interface WaitSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: { handleEvent(): void }): void;
  removeEventListener(type: 'abort', listener: { handleEvent(): void }): void;
}

const TIMEOUT: WaitOutcome = { kind: 'timeout' };
const ABORTED: WaitOutcome = { kind: 'aborted' };
const SHUTDOWN: WaitOutcome = { kind: 'shutdown' };

/**
 * One waiting request. Everything a wait holds is here, in one object: no closures of its own
 * (it is its signal's listener, and its timer's argument), and the waiters of one review are a
 * list through `next`, so a review with one waiter costs no set.
 */
class Waiter {
  next: Waiter | undefined = undefined;
  previous: Waiter | undefined = undefined;
  settled = false;
  readonly timer: NodeJS.Timeout;

  constructor(
    private readonly waiters: DecisionWaiters,
    readonly reviewId: number,
    timeoutMs: number,
    private readonly signal: WaitSignal | undefined,
    private readonly resolve: (outcome: WaitOutcome) => void,
  ) {
    this.timer = setTimeout(timeOut, timeoutMs, this);
    signal?.addEventListener('abort', this);
  }

  /** The signal aborted. */
  handleEvent(): void {
    this.settle(ABORTED);
  }

  settle(outcome: WaitOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.waiters.forget(this);
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    this.resolve(outcome);
  }
}

function timeOut(waiter: Waiter): void {
  waiter.settle(TIMEOUT);
}

/**
 * Requests waiting for a review's decision: blocking creates and long-polls. The decide path
 * wakes them through the event bus the moment the decision commits; nothing polls. Each
 * waiter is released exactly once — by the decision, its time limit, its client going away,
 * or shutdown — and leaves no timer or listener behind.
 */
export class DecisionWaiters {
  /** The first waiter of each review waited on; the others follow it through `next`. */
  private readonly byReview = new Map<number, Waiter>();
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

  wait(reviewId: number, timeoutMs: number, signal?: WaitSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve(SHUTDOWN);
    if (signal?.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve) => this.add(new Waiter(this, reviewId, timeoutMs, signal, resolve)));
  }

  /** The reviews someone is waiting on: what to re-check when events may have been missed. */
  waitedReviews(): number[] {
    return [...this.byReview.keys()];
  }

  /** Releases a review's waiters, e.g. when a re-check finds the decision already stored. */
  wake(reviewId: number, outcome: WaitOutcome): void {
    for (let waiter = this.byReview.get(reviewId); waiter; ) {
      const next = waiter.next;
      waiter.settle(outcome);
      waiter = next;
    }
  }

  /** Answers every waiter with `shutdown` and refuses new ones. */
  shutdown(): void {
    this.closed = true;
    for (const reviewId of [...this.byReview.keys()]) this.wake(reviewId, SHUTDOWN);
  }

  private add(waiter: Waiter): void {
    const first = this.byReview.get(waiter.reviewId);
    if (first) {
      waiter.next = first.next;
      waiter.previous = first;
      if (first.next) first.next.previous = waiter;
      first.next = waiter;
    } else {
      this.byReview.set(waiter.reviewId, waiter);
    }
    this.size += 1;
  }

  /** Takes a settling waiter out of its review's list. */
  forget(waiter: Waiter): void {
    if (waiter.previous) waiter.previous.next = waiter.next;
    else if (waiter.next) this.byReview.set(waiter.reviewId, waiter.next);
    else this.byReview.delete(waiter.reviewId);
    if (waiter.next) waiter.next.previous = waiter.previous;
    this.size -= 1;
  }
}
