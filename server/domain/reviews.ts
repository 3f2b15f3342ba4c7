import type { ReviewStore } from '../db/review-store';
import { AppError, invalidInput, notFound } from './errors';
import type { EventBus } from './events';
import type {
  DecisionInput,
  DecisionRecord,
  IdempotencyClaim,
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
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
  clock?: () => number;
}

/** How soon a client refused for want of waiting room should try again. */
const WAITING_ROOM_RETRY_SECONDS = 5;

/** The review lifecycle: create, read, decide, and wait for a decision. */
export class ReviewService {
  private readonly store: ReviewStore;
  private readonly bus: EventBus;
  private readonly waiters: DecisionWaiters;
  private readonly clock: () => number;
  private readonly policy: () => Policy;
  private readonly maxWaiting: number;
  /** Idempotency keys whose first request is between its lookup and its commit. */
  private readonly storingClaims = new Set<string>();

  constructor(options: ReviewServiceOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.waiters = options.waiters;
    this.policy = options.policy;
    this.clock = options.clock ?? Date.now;
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Refuses (503) a request that would wait when `max_waiting_requests` already do: each
   * holds a connection and memory until its decision. Checked before anything is stored, so
   * a refused blocking create leaves nothing behind to duplicate on its retry.
   */
  checkWaitingRoom(): void {
    if (!this.waitingRoomFull()) return;
    throw new AppError(503, `${this.waiters.count} requests are already waiting for decisions (max_waiting_requests); retry later, or create without blocking and ask for the decision later`, {
      retry_after_seconds: WAITING_ROOM_RETRY_SECONDS,
    });
  }

  waitingRoomFull(): boolean {
    return this.waiters.count >= this.maxWaiting;
  }

  /** Stores the review where the policy routes it; a rule's automatic decision is published like any other. */
  async create(input: ReviewInput, claim?: IdempotencyClaim): Promise<ReviewRecord> {
    const now = this.clock();
    const policy = this.policy();
    const placement = { routing: routeReview(policy, input), expiresAt: expiryTime(policy, input.urgency ?? 'medium', now) };
    const review = await this.store.insert(input, now, placement, claim);
    this.bus.emit('review.created', review);
    if (review.decision) this.bus.emit('review.decided', review);
    return review;
  }

  /**
   * `create` under an `Idempotency-Key`: the review the key made before, as it is now, when the
   * body is the same; otherwise a new review stored together with the key. A retry that
   * arrives while the first request is still storing its review is told to come back (409):
   * answering it would mean either a duplicate or a wait of unknown length.
   */
  async createOnce(input: ReviewInput, claim: IdempotencyClaim): Promise<{ review: ReviewRecord; replayed: boolean }> {
    const slot = `${claim.scope}\n${claim.key}`;
    if (this.storingClaims.has(slot)) {
      throw new AppError(409, 'a request with this Idempotency-Key is still being processed; retry shortly', { retry_after_seconds: 1 });
    }
    this.storingClaims.add(slot);
    try {
      const earlier = await this.store.findClaim(claim.scope, claim.key, this.clock());
      if (!earlier) return { review: await this.create(input, claim), replayed: false };
      if (earlier.requestHash !== claim.requestHash) {
        throw new AppError(422, 'this Idempotency-Key was already used with a different request body; use a new key for a new request', {
          review_id: earlier.reviewId,
        });
      }
      return { review: await this.get(earlier.reviewId), replayed: true };
    } finally {
      this.storingClaims.delete(slot);
    }
  }

  async get(id: number): Promise<ReviewRecord> {
    const review = await this.store.findById(id);
    if (!review) throw notFound('review', id);
    return review;
  }

  async list(filters: ReviewFilters, page: number, pageSize: number, order: ReviewOrder = 'newest'): Promise<ReviewPage> {
    checkFilterText(filters);
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

/**
 * Sequelize's SQLite dialect writes filter values into the SQL text, escaping quotes but not
 * NUL, which SQLite takes for the end of the statement.
 */
function checkFilterText(filters: ReviewFilters): void {
  for (const [name, value] of Object.entries(filters)) {
    if (typeof value === 'string' && value.includes('\u0000')) throw invalidInput(name, 'must not contain the NUL character');
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
