import { AppError } from '../shared/errors';
import { amongAnnouncedToAll, type EventFeed } from '../shared/events';
import { describeDuration, type Policy } from '../routing/review-policy';
import { type Clock, type Log, type OneAtATime, SYSTEM } from '../shared/unit-of-work';
import type { DueReview, ReviewRepository } from './ports';
import { INSTALLATION } from '../shared/principal';
import type { DecideReview } from './deciding';
import type { ReadReviews } from './reading';

/** `setTimeout` cannot wait longer than this (about 24.8 days); a later expiry is re-armed then. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Expired in one pass at most; the next pass follows at once. */
const BATCH = 200;
/** When another process holds the expiry, or a pass failed (a write refused), how soon this one looks again. */
const RETRY_MS = 1_000;

export interface ReviewExpiryOptions {
  store: Pick<ReviewRepository, 'nextExpiry' | 'dueForExpiry'>;
  /** Passes run in one process at a time among those sharing the database. */
  oneAtATime: OneAtATime;
  /** The system's decision on an expired review. */
  deciding: Pick<DecideReview, 'decide'>;
  /** Where an expired review's workflow stood, for its note. */
  reading: Pick<ReadReviews, 'workflowSummary'>;
  feed: EventFeed;
  policy: () => Policy;
  log: Log;
  clock?: Clock;
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
  private readonly clock: Clock;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: ReviewExpiryOptions) {
    this.clock = options.clock ?? Date.now;
    // Another process's review may expire before any this one knows of: should that process
    // stop, this one's timer must still fire in time.
    this.unsubscribe = options.feed.on(
      'review.created',
      (review) => {
        if (review.expires_at !== null) this.expireBy(Date.parse(review.expires_at));
      },
      amongAnnouncedToAll((entry) => entry.expires),
    );
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
      let ran = true;
      do {
        this.rerun = false;
        ran = await this.options.oneAtATime
          .run('review-expiry', () => this.expireDue())
          .catch((error: unknown) => {
            this.options.log.error('review expiry failed; trying again shortly', { error: String(error) });
            return false;
          });
      } while (this.rerun && !this.stopped);
      const next = this.stopped ? null : await this.options.store.nextExpiry().catch(() => this.clock() + RETRY_MS);
      // Another process sharing the database is expiring reviews right now, or this pass failed and
      // what was due still is: look again shortly rather than at once, over and over.
      if (next !== null && !this.stopped) this.arm(ran ? next : Math.max(next, this.clock() + RETRY_MS));
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

  private async expire(review: DueReview): Promise<void> {
    const decision = this.options.policy().onExpiry;
    const limit = describeDuration(Math.round((review.expires_at - review.created_at) / 1000));
    const outcome = decision === 'approve' ? 'approved' : 'rejected';
    const workflow = await this.options.reading.workflowSummary(review.organization_id, review.id);
    try {
      // The timer serves every organization of the installation.
      await this.options.deciding.decide(INSTALLATION, review.id, {
        decision_type: decision,
        reviewer_name: 'policy:expired',
        notes: `Expired: no reviewer decided within ${limit} (the limit for ${review.urgency} urgency), so the policy ${outcome} it (on_expiry: ${decision}).${
          workflow ? ` When it expired, ${workflow}.` : ''
        }`,
      }, SYSTEM);
      this.options.log.info('review expired', { review_id: review.id, decision });
    } catch (error) {
      // A reviewer decided in the same instant; their decision stands.
      if (!(error instanceof AppError && error.status === 409)) throw error;
    }
  }
}
