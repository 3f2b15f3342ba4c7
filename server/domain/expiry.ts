import type { ReviewStore } from '../db/review-store';
import type { Logger } from '../logging';
import { AppError } from './errors';
import type { EventBus } from './events';
import { describeDuration, type Policy } from './policy';
import type { ReviewService } from './reviews';

/** `setTimeout` cannot wait longer than this (about 24.8 days); a later expiry is re-armed then. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Expired in one pass at most; the next pass follows at once. */
const BATCH = 200;

export interface ReviewExpiryOptions {
  store: Pick<ReviewStore, 'nextExpiry' | 'dueForExpiry'>;
  reviews: Pick<ReviewService, 'decide'>;
  bus: EventBus;
  policy: () => Policy;
  log: Logger;
  clock?: () => number;
}

/**
 * Gives pending reviews the policy's fail-safe decision when their time is up. One timer,
 * set for the earliest expiry the database holds (through an index), re-armed after each
 * pass and whenever a new review expires sooner: nothing polls. Reviews that expired while
 * the server was down are expired by the first pass, at start-up.
 */
export class ReviewExpiry {
  private timer: NodeJS.Timeout | undefined;
  private timerAt: number | null = null;
  private running: Promise<void> | undefined;
  private rerun = false;
  private stopped = false;
  private readonly clock: () => number;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: ReviewExpiryOptions) {
    this.clock = options.clock ?? Date.now;
    this.unsubscribe = options.bus.on('review.created', (review) => {
      if (review.expires_at !== null) this.expireBy(Date.parse(review.expires_at));
    });
  }

  /** Expires what is already due, then arms the timer. */
  start(): Promise<void> {
    return this.pass();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    clearTimeout(this.timer);
  }

  /** Makes sure the timer fires by `at`. */
  private expireBy(at: number): void {
    if (this.stopped || (this.timerAt !== null && this.timerAt <= at)) return;
    this.arm(at);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timerAt = null;
      void this.pass();
    }, Math.min(Math.max(at - this.clock(), 0), MAX_TIMER_MS));
    // A pending expiry never keeps a finished process alive on its own.
    this.timer.unref();
  }

  /** One pass at a time; a pass asked for during another runs right after it. */
  private pass(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.rerun = false;
        await this.expireDue().catch((error: unknown) => this.options.log.error('review expiry failed', { error: String(error) }));
      } while (this.rerun && !this.stopped);
      const next = this.stopped ? null : await this.options.store.nextExpiry().catch(() => null);
      if (next !== null && !this.stopped) this.arm(next);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async expireDue(): Promise<void> {
    for (;;) {
      const due = await this.options.store.dueForExpiry(this.clock(), BATCH);
      for (const review of due) await this.expire(review);
      if (due.length < BATCH || this.stopped) return;
    }
  }

  private async expire(review: { id: number; urgency: string; created_at: number; expires_at: number }): Promise<void> {
    const decision = this.options.policy().onExpiry;
    const limit = describeDuration(Math.round((review.expires_at - review.created_at) / 1000));
    const outcome = decision === 'approve' ? 'approved' : 'rejected';
    try {
      await this.options.reviews.decide(review.id, {
        decision_type: decision,
        reviewer_name: 'policy:expired',
        notes: `Expired: no reviewer decided within ${limit} (the limit for ${review.urgency} urgency), so the policy ${outcome} it (on_expiry: ${decision}).`,
      });
      this.options.log.info('review expired', { review_id: review.id, decision });
    } catch (error) {
      // A reviewer decided in the same instant; their decision stands.
      if (!(error instanceof AppError && error.status === 409)) throw error;
    }
  }
}
