import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import type { OrganizationRouting } from '../routing/organization-rules';
import { expiryTime, type Policy, routeReview } from '../routing/review-policy';
import type { AgentRepository } from '../organizations/ports';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { IdempotencyClaim, NewReview, ReviewRepository } from './ports';
import type { Principal, Scope } from '../shared/principal';
import type { ReviewInput, ReviewRecord } from './records';
import { organizationOf } from '../shared/scope';
import { refuseHiddenCharacters } from '../shared/text';
import type { Workflows } from '../workflows/workflows';
import type { ReadReviews } from './reading';
import type { WaitForDecision } from './waiting';
import type { DecisionReceipts } from './receipts';

export interface SubmitReviewOptions {
  reviews: Pick<ReviewRepository, 'insert' | 'leastBusy' | 'findClaim'>;
  /** Registered agents: in an organization, a review's `agent_id` must name one of its own. */
  agents?: Pick<AgentRepository, 'find'>;
  /** An organization's own routing rules, tried before the `routing` setting (hosted edition). */
  organizationRouting?: Pick<OrganizationRouting, 'route'>;
  /** Approval workflows: the first that matches governs a new review (hosted edition). */
  workflows?: Pick<Workflows, 'start'>;
  /** A routing rule's decision is recorded with its signed receipt. */
  receipts: Pick<DecisionReceipts, 'attach'>;
  unitOfWork: UnitOfWork;
  /** The policy in force now (it can be reloaded while the service runs). */
  policy: () => Policy;
  /** Refuse text with control, bidi, zero-width or other hidden characters (`refuse_hidden_characters`). */
  refuseHiddenCharacters?: boolean;
  /** Where a review filed under a replayed key is read back. */
  read: Pick<ReadReviews, 'get'>;
  waiting: Pick<WaitForDecision, 'checkRoom' | 'wait'>;
  clock?: Clock;
}

/** What `submitReview` did, for the route and the MCP tool to put into their own words. */
export type SubmitOutcome =
  /** Stored; the caller did not ask to wait. */
  | { kind: 'stored'; review: ReviewRecord; replayed: boolean }
  | { kind: 'decided'; review: ReviewRecord; replayed: boolean }
  /** No decision in time; the review stays pending. */
  | { kind: 'timeout'; review: ReviewRecord; replayed: boolean }
  /** The service is shutting down; the review stays pending. */
  | { kind: 'shutdown'; reviewId: number; replayed: boolean }
  /** The caller went away while waiting. */
  | { kind: 'aborted' };

export interface SubmitOptions {
  /** Wait this long for the decision; absent, answer once the review is stored. */
  waitMs?: number;
  /** Aborts the wait (the client went away). */
  signal?: AbortSignal;
  /** An `Idempotency-Key` and the digest of the body it came with. */
  idempotency?: Omit<IdempotencyClaim, 'caller'>;
}

/** Filing a review: store it where the policy routes it, once per key, and wait when asked to. */
export class SubmitReview {
  private readonly clock: Clock;
  /** Idempotency keys whose first request is between its lookup and its commit, in this process. */
  private readonly storingClaims = new Set<string>();

  constructor(private readonly options: SubmitReviewOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Stores a review where the policy routes it — once per `Idempotency-Key` — and, when asked
   * to, waits for its decision. A wait is refused (503) before anything is stored when the
   * waiting room is full, so the refused request's retry cannot make a duplicate.
   */
  async submit(principal: Principal, input: ReviewInput, options: SubmitOptions = {}): Promise<SubmitOutcome> {
    if (this.options.refuseHiddenCharacters) {
      const { task_type, proposed_action, agent_reasoning, framework, metadata } = input;
      refuseHiddenCharacters({ task_type, proposed_action, agent_reasoning, framework, metadata });
    }
    if (options.waitMs !== undefined) this.options.waiting.checkRoom();
    const { review, replayed } = await this.store(principal, input, options.idempotency);
    if (options.waitMs === undefined) return { kind: 'stored', review, replayed };
    // Returned, not awaited: this frame (the input, the review as stored) is let go while the
    // agent waits, which may be for an hour, and thousands may be waiting.
    return this.answerWhenDecided(principal.scope, review.id, replayed, options.waitMs, options.signal);
  }

  private async store(principal: Principal, input: ReviewInput, idempotency: SubmitOptions['idempotency']): Promise<{ review: ReviewRecord; replayed: boolean }> {
    const bound = withBoundAgent(principal, input);
    const claim = idempotency && { ...idempotency, caller: principal.id };
    return claim ? this.createOnce(principal.scope, bound, claim) : { review: await this.create(principal.scope, bound), replayed: false };
  }

  private async answerWhenDecided(scope: Scope, reviewId: number, replayed: boolean, waitMs: number, signal: AbortSignal | undefined): Promise<SubmitOutcome> {
    const outcome = await this.options.waiting.wait(scope, reviewId, waitMs, signal);
    switch (outcome.kind) {
      case 'decided':
        return { kind: 'decided', review: outcome.review, replayed };
      case 'timeout': {
        // A decision may have landed in the instant the timer fired; it beats a timeout.
        const current = await this.options.read.get(scope, reviewId);
        return current.decision ? { kind: 'decided', review: current, replayed } : { kind: 'timeout', review: current, replayed };
      }
      case 'shutdown':
        return { kind: 'shutdown', reviewId, replayed };
      case 'aborted':
        return { kind: 'aborted' };
    }
  }

  /**
   * In an organization a review's `agent_id` must name one of its registered agents (another
   * organization's is a 404, as if it did not exist); the self-hosted installation takes any
   * number as a label.
   */
  private async checkAgent(tx: Tx, scope: Scope, agentId: number | null | undefined): Promise<void> {
    const { agents } = this.options;
    if (scope.organizationId === null || agentId === undefined || agentId === null || !agents) return;
    if (!(await agents.find(scope.organizationId, agentId, tx))) throw notFound('agent', agentId);
  }

  /** Stores the review where the policy routes it; a rule's automatic decision is stored with it. */
  private async create(scope: Scope, input: ReviewInput, claim?: IdempotencyClaim): Promise<ReviewRecord> {
    refuseNul(input);
    const now = this.clock();
    const policy = this.options.policy();
    const organizationId = organizationOf(scope, input.organization_id);
    const routedByOrganization = organizationId === null ? null : await this.options.organizationRouting?.route(organizationId, input);
    const routing = routedByOrganization ?? routeReview(policy, input);
    const urgency = input.urgency ?? 'medium';
    // The work touches nothing but the database: it may be run again (see WorkOptions).
    return this.options.unitOfWork.run(async (tx) => {
      await this.checkAgent(tx, scope, input.agent_id);
      const review: NewReview = {
        organization_id: organizationId,
        agent_id: input.agent_id ?? null,
        task_type: input.task_type,
        proposed_action: input.proposed_action,
        agent_reasoning: input.agent_reasoning ?? null,
        confidence_score: input.confidence_score ?? null,
        urgency,
        framework: input.framework ?? null,
        metadata: input.metadata ?? {},
        assigned_to: routing.assignTo ?? (await this.options.reviews.leastBusy(tx, scope, routing.candidates)),
        assigned_team: routing.team,
        routing_rule: routing.rule,
        created_at: now,
        expires_at: routing.autoDecide ? null : expiryTime(policy, urgency, now),
        autoDecision: routing.autoDecide && {
          decision_type: routing.autoDecide,
          reviewer_name: `rule:${routing.rule}`,
          notes: `Decided automatically by the routing rule '${routing.rule}'.`,
        },
      };
      const inserted = await this.options.receipts.attach(tx, await this.options.reviews.insert(tx, review, claim));
      const workflow = organizationId !== null && !inserted.decision ? await this.options.workflows?.start(tx, organizationId, inserted.id, input) : null;
      const stored = workflow ? { ...inserted, workflow } : inserted;
      tx.record(domainEvent('review.created', stored, stored));
      if (stored.decision) tx.record(domainEvent('review.decided', stored, stored));
      return stored;
    }, { rerunnable: true });
  }

  /**
   * `create` under an `Idempotency-Key`: the review the key made before, as it is now, when the
   * body is the same; otherwise a new review stored together with the key. A retry that arrives
   * while the first request is still storing its review in this process is told to come back
   * (409); one that loses the race in another process finds the key's review once it is there.
   */
  private async createOnce(scope: Scope, input: ReviewInput, claim: IdempotencyClaim): Promise<{ review: ReviewRecord; replayed: boolean }> {
    const slot = `${claim.caller}\n${claim.key}`;
    if (this.storingClaims.has(slot)) {
      throw new AppError(409, 'a request with this Idempotency-Key is still being processed; retry shortly', { retry_after_seconds: 1 });
    }
    this.storingClaims.add(slot);
    try {
      const earlier = await this.options.reviews.findClaim(scope, claim.caller, claim.key, this.clock());
      if (earlier) return { review: await this.replay(scope, earlier, claim), replayed: true };
      try {
        return { review: await this.create(scope, input, claim), replayed: false };
      } catch (error) {
        if (!(error instanceof ClaimTaken)) throw error;
        const winner = await this.options.reviews.findClaim(scope, claim.caller, claim.key, this.clock());
        if (!winner) throw error;
        return { review: await this.replay(scope, winner, claim), replayed: true };
      }
    } finally {
      this.storingClaims.delete(slot);
    }
  }

  private async replay(scope: Scope, earlier: { reviewId: number; requestHash: string }, claim: IdempotencyClaim): Promise<ReviewRecord> {
    if (earlier.requestHash !== claim.requestHash) {
      throw new AppError(422, 'this Idempotency-Key was already used with a different request body; use a new key for a new request', {
        review_id: earlier.reviewId,
      });
    }
    return this.options.read.get(scope, earlier.reviewId);
  }
}

/**
 * Thrown by a repository when an `Idempotency-Key` it was to store is already stored: another
 * process stored the same key a moment ago.
 */
export class ClaimTaken extends Error {
  constructor() {
    super('the Idempotency-Key is already stored');
    this.name = 'ClaimTaken';
  }
}

/** A key that belongs to a registered agent files every review as that agent's. */
function withBoundAgent(principal: Principal, input: ReviewInput): ReviewInput {
  const bound = principal.scope.agentId;
  if (bound === undefined) return input;
  if (input.agent_id !== undefined && input.agent_id !== null && input.agent_id !== bound) {
    throw invalidInput('agent_id', `must be ${bound} or left out: this API key belongs to agent ${bound}`);
  }
  return { ...input, agent_id: bound };
}
