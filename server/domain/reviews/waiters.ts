import { amongAnnouncedToAll, type EventFeed } from '../shared/events';
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
/** Node fires a timer set for longer at once; one that fires early is set again for the rest. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * One waiting request. Everything a wait holds is here, in one object: no closures of its own
 * (it is its signal's listener), the waiters of one review are a list through `next`, so a
 * review with one waiter costs no set, and its time limit is a place among `Deadlines`, not a
 * timer of its own.
 */
class Waiter {
  next: Waiter | undefined = undefined;
  previous: Waiter | undefined = undefined;
  settled = false;
  /** Its index in the deadlines' heap; -1 once out of it. */
  slot = -1;

  constructor(
    private readonly waiters: DecisionWaiters,
    readonly reviewId: number,
    /** When it times out, on `performance.now()`'s clock. */
    readonly deadline: number,
    private readonly signal: WaitSignal | undefined,
    private readonly resolve: (outcome: WaitOutcome) => void,
  ) {
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
    this.signal?.removeEventListener('abort', this);
    this.resolve(outcome);
  }
}

/**
 * The waiters' time limits, earliest first (a binary heap), behind one timer set for the
 * earliest. A Node timer for each waiter costs a `Timeout`, its argument list and two numbers,
 * about 0.2 KB for every one of thousands of agents waiting. The timer is not moved when the
 * earliest waiter leaves early: it fires for nothing and is set for the next.
 */
class Deadlines {
  private readonly heap: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires; Infinity when none is set. */
  private timerDue = Number.POSITIVE_INFINITY;
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    const now = performance.now();
    for (let first = this.heap[0]; first && first.deadline <= now; first = this.heap[0]) {
      this.remove(first);
      first.settle(TIMEOUT);
    }
    this.setTimer();
  };

  add(waiter: Waiter): void {
    waiter.slot = this.heap.length;
    this.heap.push(waiter);
    this.moveUp(waiter);
    this.setTimer();
  }

  remove(waiter: Waiter): void {
    const { slot } = waiter;
    if (slot === -1) return;
    waiter.slot = -1;
    const last = this.heap.pop() as Waiter;
    if (last !== waiter) {
      this.place(last, slot);
      this.moveUp(last);
      this.moveDown(last);
    }
    if (this.heap.length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerDue = Number.POSITIVE_INFINITY;
    }
  }

  /** Sets the timer for the earliest deadline, unless it is already set as early. */
  private setTimer(): void {
    const first = this.heap[0];
    if (!first || first.deadline >= this.timerDue) return;
    clearTimeout(this.timer);
    this.timerDue = first.deadline;
    this.timer = setTimeout(this.expire, Math.min(Math.ceil(first.deadline - performance.now()), LONGEST_TIMER_MS));
  }

  private place(waiter: Waiter, slot: number): void {
    this.heap[slot] = waiter;
    waiter.slot = slot;
  }

  private moveUp(waiter: Waiter): void {
    while (waiter.slot > 0) {
      const parent = this.heap[(waiter.slot - 1) >> 1];
      if (parent.deadline <= waiter.deadline) return;
      const slot = waiter.slot;
      this.place(waiter, parent.slot);
      this.place(parent, slot);
    }
  }

  private moveDown(waiter: Waiter): void {
    for (;;) {
      const left = 2 * waiter.slot + 1;
      if (left >= this.heap.length) return;
      const right = left + 1;
      const child = right < this.heap.length && this.heap[right].deadline < this.heap[left].deadline ? this.heap[right] : this.heap[left];
      if (child.deadline >= waiter.deadline) return;
      const slot = waiter.slot;
      this.place(waiter, child.slot);
      this.place(child, slot);
    }
  }
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
  private readonly deadlines = new Deadlines();
  private size = 0;
  private closed = false;

  constructor(feed: EventFeed) {
    // Of other processes' decisions, only those of reviews someone here waits on.
    feed.on(
      'review.decided',
      (review) => this.wake(review.id, { kind: 'decided', review }),
      amongAnnouncedToAll((entry) => entry.type === 'review.decided' && this.byReview.has(entry.review_id)),
    );
  }

  /** Waiting requests right now; tests assert on it to prove nothing leaks. */
  get count(): number {
    return this.size;
  }

  wait(reviewId: number, timeoutMs: number, signal?: WaitSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve(SHUTDOWN);
    if (signal?.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve) => this.add(new Waiter(this, reviewId, performance.now() + timeoutMs, signal, resolve)));
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
    this.deadlines.add(waiter);
    this.size += 1;
  }

  /** Takes a settling waiter out of its review's list. */
  forget(waiter: Waiter): void {
    if (waiter.previous) waiter.previous.next = waiter.next;
    else if (waiter.next) this.byReview.set(waiter.reviewId, waiter.next);
    else this.byReview.delete(waiter.reviewId);
    if (waiter.next) waiter.next.previous = waiter.previous;
    this.deadlines.remove(waiter);
    this.size -= 1;
  }
}
