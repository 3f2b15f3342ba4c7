import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import type { OrganizationRouting } from '../routing/organization-rules';
import { expiryTime, type Policy, routeReview } from '../routing/review-policy';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { IdempotencyClaim, NewReview, ReviewRepository } from './ports';
import type { Principal, Scope } from '../shared/principal';
import type { ReviewInput, ReviewRecord } from './records';
import { organizationOf } from '../shared/scope';
import { refuseHiddenCharacters } from '../shared/text';
import type { Workflows } from '../workflows/workflows';
import type { AttachmentService, Upload } from './attachments';
import type { ReadReviews } from './reading';
import type { WaitForDecision } from './waiting';
import type { WaitOutcome, WaitSignal } from './waiters';
import type { DecisionReceipts } from './receipts';

export interface SubmitReviewOptions {
  reviews: Pick<ReviewRepository, 'insert' | 'leastBusy' | 'findClaim'>;
  /** An organization's own routing rules, tried before the `routing` setting (hosted edition). */
  organizationRouting?: Pick<OrganizationRouting, 'route' | 'saveMark'>;
  /** Approval workflows: the first that matches governs a new review (hosted edition). */
  workflows?: Pick<Workflows, 'governing' | 'start'>;
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
  /** Files filed with a review, stored in its transaction. */
  attachments?: Pick<AttachmentService, 'checkUploads' | 'attachWithin' | 'removePlaced' | 'discard'>;
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
  signal?: WaitSignal;
  /** An `Idempotency-Key` and the digest of the body it came with. */
  idempotency?: Omit<IdempotencyClaim, 'caller'>;
  /**
   * Files received with the request, stored as the review's attachments in the transaction
   * that stores it: a reviewer never sees the review without them. Submitting takes them over:
   * whatever happens, their holding files are gone when the review is stored or refused.
   */
  uploads?: readonly Upload[];
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
    const uploads = options.uploads ?? [];
    let stored: { review: ReviewRecord; replayed: boolean };
    try {
      if (this.options.refuseHiddenCharacters) {
        const { task_type, proposed_action, agent_reasoning, framework, metadata } = input;
        refuseHiddenCharacters({ task_type, proposed_action, agent_reasoning, framework, metadata });
      }
      checkAgentName(input.agent_name);
      if (uploads.length > 0) this.attachments().checkUploads(uploads);
      if (options.waitMs !== undefined) this.options.waiting.checkRoom();
      stored = await this.store(principal, input, options.idempotency, uploads);
    } finally {
      // Before any wait: a replayed request's files are not kept, and the wait may be long.
      if (uploads.length > 0) await this.attachments().discard(uploads);
    }
    const { review, replayed } = stored;
    if (options.waitMs === undefined) return { kind: 'stored', review, replayed };
    // Returned, not awaited: this frame (the input, the review as stored) is let go while the
    // agent waits, which may be for an hour, and thousands may be waiting.
    return this.answerWhenDecided(principal.scope, review.id, replayed, options.waitMs, options.signal);
  }

  private async store(
    principal: Principal,
    input: ReviewInput,
    idempotency: SubmitOptions['idempotency'],
    uploads: readonly Upload[],
  ): Promise<{ review: ReviewRecord; replayed: boolean }> {
    const bound = withBoundAgent(principal, input);
    const claim = idempotency && { ...idempotency, caller: principal.id };
    return claim ? this.createOnce(principal, bound, claim, uploads) : { review: await this.create(principal, bound, uploads), replayed: false };
  }

  private attachments(): NonNullable<SubmitReviewOptions['attachments']> {
    const { attachments } = this.options;
    if (!attachments) throw new Error('this service was composed without attachments, so a review cannot be filed with files');
    return attachments;
  }

  /**
   * The wait's outcome as the caller's answer. Chained rather than awaited: a suspended frame
   * would be kept, with its registers, for as long as the agent waits.
   */
  private answerWhenDecided(scope: Scope, reviewId: number, replayed: boolean, waitMs: number, signal: WaitSignal | undefined): Promise<SubmitOutcome> {
    return this.options.waiting.wait(scope, reviewId, waitMs, signal).then((outcome) => this.answerTo(scope, reviewId, replayed, outcome));
  }

  private async answerTo(scope: Scope, reviewId: number, replayed: boolean, outcome: WaitOutcome): Promise<SubmitOutcome> {
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
   * Stores the review where the policy routes it, with its files; a rule's automatic decision
   * is stored with it.
   */
  private async create(principal: Principal, input: ReviewInput, uploads: readonly Upload[], claim?: IdempotencyClaim): Promise<ReviewRecord> {
    refuseNul(input);
    const { scope } = principal;
    const now = this.clock();
    const policy = this.options.policy();
    const organizationId = organizationOf(scope, input.organization_id);
    const routedByOrganization = organizationId === null ? null : await this.options.organizationRouting?.route(organizationId, input);
    // A rule that only marked the review (shadow, audit sample) leaves its routing to the setting.
    const routing = routedByOrganization?.rule ? routedByOrganization : { ...routeReview(policy, input), mark: routedByOrganization?.mark ?? null };
    const governing = organizationId === null || routing.autoDecide ? null : ((await this.options.workflows?.governing(organizationId, input)) ?? null);
    const urgency = input.urgency ?? 'medium';
    /** Files moved into place by the transaction, to be removed should it roll back. */
    const placed: string[] = [];
    const agentId = input.agent_id ?? null;
    const work = async (tx: Tx): Promise<ReviewRecord> => {
      const review: NewReview = {
        organization_id: organizationId,
        agent_id: agentId,
        agent_name: input.agent_name?.trim() ?? null,
        // In an organization a review's `agent_id` must name one of its registered agents (another
        // organization's is a 404, as if it did not exist); the self-hosted installation takes any
        // number as a label.
        registeredAgent: scope.organizationId !== null && agentId !== null,
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
      const filed = await this.options.reviews.insert(tx, review, claim);
      if (!filed) throw notFound('agent', agentId as number);
      const inserted = await this.options.receipts.attach(tx, filed);
      const marked = routing.mark && organizationId !== null && !inserted.decision ? routing.mark : null;
      if (marked) await this.options.organizationRouting?.saveMark(tx, organizationId!, inserted.id, marked);
      const workflow = governing && !inserted.decision ? await this.options.workflows?.start(tx, inserted.id, governing) : null;
      const stored = {
        ...inserted,
        ...(workflow ? { workflow } : {}),
        ...(marked ? (marked.kind === 'shadow' ? { shadow_rule_id: marked.rule_id } : { audit_sample: true as const, audit_rule_id: marked.rule_id }) : {}),
      };
      if (inserted.decision && organizationId !== null && routedByOrganization?.autoDecide) {
        tx.audit({ organization_id: organizationId, action: 'routing_rule.auto_decided', target_type: 'review', target_id: inserted.id, data: { rule: routing.rule, decision_type: inserted.decision.decision_type }, bySystem: true });
      }
      tx.record(domainEvent('review.created', stored, stored));
      if (uploads.length > 0) await this.attachments().attachWithin(tx, scope, stored.id, uploads, placed);
      if (stored.decision) tx.record(domainEvent('review.decided', stored, stored));
      return stored;
    };
    // Without files the work touches nothing but the database: it may be run again (see
    // WorkOptions). Files are moved into place, which a rerun would find gone.
    if (uploads.length === 0) return this.options.unitOfWork.run(work, { by: principal, rerunnable: true });
    try {
      return await this.options.unitOfWork.run(work, { by: principal });
    } catch (error) {
      await this.attachments().removePlaced(placed);
      throw error;
    }
  }

  /**
   * `create` under an `Idempotency-Key`: the review the key made before, as it is now, when the
   * body is the same; otherwise a new review stored together with the key. A retry that arrives
   * while the first request is still storing its review in this process is told to come back
   * (409); one that loses the race in another process finds the key's review once it is there.
   */
  private async createOnce(principal: Principal, input: ReviewInput, claim: IdempotencyClaim, uploads: readonly Upload[]): Promise<{ review: ReviewRecord; replayed: boolean }> {
    const { scope } = principal;
    const slot = `${claim.caller}\n${claim.key}`;
    if (this.storingClaims.has(slot)) {
      throw new AppError(409, 'a request with this Idempotency-Key is still being processed; retry shortly', { retry_after_seconds: 1 });
    }
    this.storingClaims.add(slot);
    try {
      const earlier = await this.options.reviews.findClaim(scope, claim.caller, claim.key, this.clock());
      if (earlier) return { review: await this.replay(scope, earlier, claim), replayed: true };
      try {
        return { review: await this.create(principal, input, uploads, claim), replayed: false };
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

/**
 * An `agent_name` is shown to reviewers as the agent's name: never a hidden or reordering
 * character, whatever `refuse_hidden_characters` says, and never only spaces. (The document
 * holds its length.)
 */
function checkAgentName(name: string | null | undefined): void {
  if (name === undefined || name === null) return;
  refuseHiddenCharacters({ agent_name: name }, 'an agent\'s name is shown to reviewers as it is written');
  if (name.trim() === '') throw invalidInput('agent_name', 'must not be blank; leave it out for an agent without a name');
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
