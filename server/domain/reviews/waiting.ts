import { AppError, notFound } from '../shared/errors';
import { domainEvent } from '../shared/events';
import { INSTALLATION, type Scope } from '../shared/principal';
import { type Clock, type Log, SYSTEM, type Tx, type UnitOfWork } from '../shared/unit-of-work';
import type { ReviewRepository, ReviewWaitRepository } from './ports';
import type { ReviewRecord } from './records';
import type { DecisionWaiters, WaitOutcome, WaitSignal } from './waiters';

/** How soon a client refused for want of waiting room should try again. */
const WAITING_ROOM_RETRY_SECONDS = 5;

interface Shown {
  waits: ReviewWaitRepository;
  unitOfWork: UnitOfWork;
  /** The review as readers get it (with its workflow's progress), for the event's payload. */
  read: (scope: Scope, reviewId: number) => Promise<ReviewRecord>;
  log: Pick<Log, 'error'>;
}

function reportShowing(shown: Shown, step: 'record' | 'remove', reviewId: number, error: unknown): void {
  shown.log.error(`could not ${step} a wait on a review`, { review_id: reviewId, error: String(error) });
}

export interface WaitForDecisionOptions {
  reviews: Pick<ReviewRepository, 'findById'>;
  waiters: DecisionWaiters;
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
  /**
   * Where waits are written down for every process to see (a review's `waiting_until`), with
   * the unit of work that writes them and their `review.waiting` events; absent, waits are
   * held but not shown.
   */
  shown?: Shown;
  clock?: Clock;
}

/**
 * Waiting for a review's decision: a blocking create, a long-poll, an MCP call. Waits are pushed
 * their decision (no polling), and bounded in number, since each holds a connection and memory.
 */
export class WaitForDecision {
  private readonly maxWaiting: number;
  private readonly clock: Clock;

  constructor(private readonly options: WaitForDecisionOptions) {
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
    this.clock = options.clock ?? Date.now;
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
  async wait(scope: Scope, reviewId: number, timeoutMs: number, signal?: WaitSignal): Promise<WaitOutcome> {
    const { waiters, reviews } = this.options;
    // Before the timer starts: a wait that timed out never shows as still waiting.
    const until = this.clock() + timeoutMs;
    const outcome = waiters.wait(reviewId, timeoutMs, signal);
    const current = await reviews.findById(scope, reviewId);
    if (!current) {
      waiters.wake(reviewId, { kind: 'aborted' });
      throw notFound('review', reviewId);
    }
    if (current.decision) waiters.wake(reviewId, { kind: 'decided', review: current });
    else this.show(scope, reviewId, until, outcome);
    return outcome;
  }

  /**
   * Writes the wait down while it lasts, so every process's readers see `waiting_until`, and
   * tells live streams when that moves. It runs beside the wait and never fails it: a wait not
   * shown still gets its decision, and a row left behind stops counting at its `until`. While
   * the agent waits it holds one link on the outcome and the row's id, nothing more. The row is
   * the system's bookkeeping of a connection, which no audit entry names (`auditEntryOf`).
   */
  private show(scope: Scope, reviewId: number, until: number, outcome: Promise<WaitOutcome>): void {
    const { shown } = this.options;
    if (!shown) return;
    const started = this.startShowing(shown, scope, reviewId, until);
    void outcome.then((ended) => this.stopShowing(shown, scope, reviewId, started, ended));
  }

  /** The id of the wait's row, or null when it could not be written (reported). */
  private async startShowing(shown: Shown, scope: Scope, reviewId: number, until: number): Promise<number | null> {
    const { waits, unitOfWork, read } = shown;
    try {
      // Read before the write, outside its transaction: a workflow's progress is read on a connection of its own.
      const review = await read(scope, reviewId);
      return await unitOfWork.run(async (tx) => {
        const wait = await waits.start(tx, reviewId, until, this.clock());
        if (wait.raised) await this.announce(tx, scope, review, wait.latest);
        return wait.id;
      }, { by: SYSTEM });
    } catch (error) {
      reportShowing(shown, 'record', reviewId, error);
      return null;
    }
  }

  private async stopShowing(shown: Shown, scope: Scope, reviewId: number, started: Promise<number | null>, ended: WaitOutcome): Promise<void> {
    const { waits, unitOfWork, read } = shown;
    try {
      const waitId = await started;
      // A decision says itself that nobody waits; at shutdown the process removes all its waits at once.
      if (waitId === null || ended.kind === 'shutdown') return;
      const review = ended.kind === 'decided' ? null : await read(scope, reviewId);
      await unitOfWork.run(async (tx) => {
        const { lowered, latest } = await waits.end(tx, waitId, this.clock());
        if (lowered && review) await this.announce(tx, scope, review, latest);
      }, { by: SYSTEM });
    } catch (error) {
      reportShowing(shown, 'remove', reviewId, error);
    }
  }

  /**
   * `review.waiting`: the review with its new `waiting_until`, while it is still pending in this
   * transaction (a decision that landed since the read has said that nobody waits). Its other
   * fields are as read just before; clients that hold the review take the `waiting_until`.
   */
  private async announce(tx: Tx, scope: Scope, review: ReviewRecord, latest: number | null): Promise<void> {
    const now = await this.options.reviews.findById(scope, review.id, tx);
    if (!now || now.decision) return;
    tx.record(domainEvent('review.waiting', review, { ...review, waiting_until: latest === null ? null : new Date(latest).toISOString() }));
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
