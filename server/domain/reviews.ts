import { AppError, invalidInput, notFound, refuseNul } from './errors';
import { domainEvent } from './events';
import type { OrganizationRouting } from './organization-routing';
import { expiryTime, type Policy, routeReview } from './policy';
import { type AgentRepository, type Clock, type DecisionOutcome, type IdempotencyClaim, INSTALLATION, type NewReview, type PeopleRepository, type Principal, type ReviewRepository, type Scope, type Tx, type UnitOfWork } from './ports';
import type { DecisionInput, DecisionRecord, ReviewFilters, ReviewInput, ReviewOrder, ReviewPage, ReviewRecord, VoteAnswer } from './records';
import { refuseHiddenCharacters } from './text';
import { castVote, progressOf } from './workflow';
import type { Workflows } from './workflows';
import { isOrganizationAdmin, organizationOf, scopeOf } from './scope';
import type { DecisionWaiters, WaitOutcome } from './waiters';

export interface ReviewServiceOptions {
  reviews: ReviewRepository;
  /** Registered agents: in an organization, a review's `agent_id` must name one of its own. */
  agents?: AgentRepository;
  /** An organization's people: its decisions are theirs, by id (hosted edition). */
  people?: PeopleRepository;
  /** An organization's own routing rules, tried before the `routing` setting (hosted edition). */
  organizationRouting?: Pick<OrganizationRouting, 'route'>;
  /** Approval workflows: a governed review is decided by votes (hosted edition). */
  workflows?: Workflows;
  unitOfWork: UnitOfWork;
  waiters: DecisionWaiters;
  /** The policy in force now (it can be reloaded while the service runs). */
  policy: () => Policy;
  /** Most requests held waiting for decisions at once (`max_waiting_requests`). */
  maxWaiting?: number;
  /** Refuse (400) a review whose text holds a hidden character (`refuse_hidden_characters`). */
  refuseHiddenCharacters?: boolean;
  clock?: Clock;
}

/** A decision, or, in a review an approval workflow governs, a vote that did not yet decide it. */
export type DecideOutcome = { kind: 'decided'; decision: DecisionRecord } | { kind: 'voted'; vote: VoteAnswer };

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

/** How soon a client refused for want of waiting room should try again. */
const WAITING_ROOM_RETRY_SECONDS = 5;

/** The review lifecycle: submit (store, route, wait), read, decide. HTTP, MCP and the CLI call these. */
export class ReviewService {
  private readonly clock: Clock;
  private readonly maxWaiting: number;
  /** Idempotency keys whose first request is between its lookup and its commit, in this process. */
  private readonly storingClaims = new Set<string>();

  constructor(private readonly options: ReviewServiceOptions) {
    this.clock = options.clock ?? Date.now;
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Stores a review where the policy routes it — once per `Idempotency-Key` — and, when asked
   * to, waits for its decision. A wait is refused (503) before anything is stored when the
   * waiting room is full, so the refused request's retry cannot make a duplicate.
   */
  async submitReview(principal: Principal, input: ReviewInput, options: SubmitOptions = {}): Promise<SubmitOutcome> {
    if (this.options.refuseHiddenCharacters) {
      const { task_type, proposed_action, agent_reasoning, framework, metadata } = input;
      refuseHiddenCharacters({ task_type, proposed_action, agent_reasoning, framework, metadata });
    }
    if (options.waitMs !== undefined) this.checkWaitingRoom();
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
    const outcome = await this.waitForDecision(scope, reviewId, waitMs, signal);
    switch (outcome.kind) {
      case 'decided':
        return { kind: 'decided', review: outcome.review, replayed };
      case 'timeout': {
        // A decision may have landed in the instant the timer fired; it beats a timeout.
        const current = await this.get(scope, reviewId);
        return current.decision ? { kind: 'decided', review: current, replayed } : { kind: 'timeout', review: current, replayed };
      }
      case 'shutdown':
        return { kind: 'shutdown', reviewId, replayed };
      case 'aborted':
        return { kind: 'aborted' };
    }
  }

  /**
   * Refuses (503) a request that would wait when `max_waiting_requests` already do: each holds
   * a connection and memory until its decision.
   */
  checkWaitingRoom(): void {
    if (!this.waitingRoomFull()) return;
    throw new AppError(503, `${this.options.waiters.count} requests are already waiting for decisions (max_waiting_requests); retry later, or create without blocking and ask for the decision later`, {
      retry_after_seconds: WAITING_ROOM_RETRY_SECONDS,
    });
  }

  waitingRoomFull(): boolean {
    return this.options.waiters.count >= this.maxWaiting;
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
      const inserted = await this.options.reviews.insert(tx, review, claim);
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
    return this.get(scope, earlier.reviewId);
  }

  async get(scope: Scope, id: number): Promise<ReviewRecord> {
    const review = await this.options.reviews.findById(scope, id);
    if (!review) throw notFound('review', id);
    return (await this.withWorkflows(scope, [review]))[0];
  }

  async list(scope: Scope, filters: ReviewFilters, page: number, pageSize: number, order: ReviewOrder = 'newest'): Promise<ReviewPage> {
    const { organization_id: organizationId, ...rest } = filters;
    checkFilterText(rest);
    const { reviews, total } = await this.options.reviews.list(scopeOf(scope, organizationId), rest, page, pageSize, order);
    return { reviews: await this.withWorkflows(scope, reviews), total, page, page_size: pageSize };
  }

  /** Reviews of an organization with their workflows' progress, where one governs them. */
  private withWorkflows(scope: Scope, reviews: ReviewRecord[]): Promise<ReviewRecord[]> | ReviewRecord[] {
    return this.options.workflows ? this.options.workflows.withProgress(scope.organizationId, reviews) : reviews;
  }

  /**
   * A decision made by `principal`. In an organization it is always a person's: a signed-in
   * person decides as themselves, and an admin key names the reviewer (`reviewer_id`) it
   * decides for; the name stored is that person's, never one typed in. The self-hosted
   * edition takes the body's reviewer as it is.
   */
  async decideAs(principal: Principal, reviewId: number, input: DecisionInput): Promise<DecideOutcome> {
    const attributed = await this.attributed(principal, input);
    const organizationId = principal.scope.organizationId;
    const workflows = this.options.workflows;
    if (!workflows || organizationId === null || typeof attributed.reviewer_id !== 'number') {
      return { kind: 'decided', decision: await this.decide(principal.scope, reviewId, attributed) };
    }
    refuseNul(attributed);
    checkDecisionShape(attributed);
    const reviewerId = attributed.reviewer_id;
    const now = this.clock();
    const result = await this.options.unitOfWork.run(async (tx): Promise<DecisionOutcome | DecideOutcome> => {
      const state = await workflows.lock(tx, organizationId, reviewId);
      if (!state) return this.options.reviews.recordDecision(tx, principal.scope, reviewId, attributed, now).then((outcome) => this.recorded(tx, outcome));
      const review = await this.options.reviews.findById(principal.scope, reviewId, tx);
      if (!review) return { outcome: 'not_found' };
      if (review.decision) return { outcome: 'already_decided', review };
      const { voters, progress: before } = await workflows.votersAndProgress(tx, organizationId, state);
      const voter = voters.find((candidate) => candidate.id === reviewerId);
      if (!voter) throw new AppError(403, `you are not an approver of this review's workflow (${before.name})`);
      const vote = castVote(state, voter, attributed, new Date(now).toISOString());
      if (vote.kind === 'refused') throw new AppError(vote.status, vote.reason);
      await workflows.save(tx, organizationId, reviewId, vote.state);
      if (vote.kind === 'decided') {
        const final = { ...vote.decision, reviewer_id: voter.id, reviewer_name: voter.name };
        return this.recorded(tx, await this.options.reviews.recordDecision(tx, principal.scope, reviewId, final, now));
      }
      const progress = progressOf(vote.state, voters);
      tx.record(domainEvent('review.vote', review, { ...review, workflow: progress }));
      const stage = progress.stages[Math.min(progress.stage, progress.stages.length - 1)];
      return {
        kind: 'voted',
        vote: { review_id: reviewId, status: 'pending', votes: progress.votes, workflow: { id: progress.id, name: progress.name, stage: progress.stage, required_approvals: stage.required_approvals, approvals: stage.approvals } },
      };
    });
    if ('kind' in result) return result;
    return { kind: 'decided', decision: this.answer(reviewId, result) };
  }

  /** Where the approval workflow of an organization's review stood, in words; null without one. */
  workflowSummary(organizationId: number | null, reviewId: number): Promise<string | null> {
    return organizationId === null || !this.options.workflows ? Promise.resolve(null) : this.options.workflows.summary(reviewId);
  }

  /**
   * "Mine" for a signed-in person: reviews assigned to them (by e-mail) or to a team they are
   * in. A key stands for no person: 400.
   */
  async assignmentsOf(principal: Principal): Promise<NonNullable<ReviewFilters['assigned_to_any']>> {
    const people = this.options.people;
    const user = principal.user && people ? await people.findUser(principal.scope.organizationId as number, principal.user.id) : null;
    if (!user || !people) throw invalidInput('mine', 'is for a person signed in to the dashboard; an API key filters with assigned_to');
    return { people: [user.email], teams: await people.teamNamesOf(user.id) };
  }

  async decide(scope: Scope, reviewId: number, input: DecisionInput): Promise<DecisionRecord> {
    refuseNul(input);
    checkDecisionShape(input);
    const now = this.clock();
    const result = await this.options.unitOfWork.run(async (tx) => this.recorded(tx, await this.options.reviews.recordDecision(tx, scope, reviewId, input, now)));
    return this.answer(reviewId, result);
  }

  /** A decision recorded in `tx` has its event recorded with it. */
  private recorded(tx: Tx, outcome: DecisionOutcome): DecisionOutcome {
    if (outcome.outcome === 'recorded') tx.record(domainEvent('review.decided', outcome.review, outcome.review));
    return outcome;
  }

  /** The decision recorded, or why there is none (404, or 409 with the decision that stands). */
  private answer(reviewId: number, result: DecisionOutcome): DecisionRecord {
    switch (result.outcome) {
      case 'not_found':
        throw notFound('review', reviewId);
      case 'already_decided':
        throw new AppError(409, `review ${reviewId} has already been decided (${result.review.status})`, {
          review_id: reviewId,
          decision: result.review.decision,
        });
      case 'recorded':
        return result.review.decision as DecisionRecord;
    }
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

  /** The decision, or null while the review is pending. */
  async decision(scope: Scope, reviewId: number): Promise<DecisionRecord | null> {
    return (await this.get(scope, reviewId)).decision;
  }

  /**
   * Waits until the review is decided, `timeoutMs` passes, `signal` aborts or the service
   * shuts down. Subscribes before reading the row, so a decision that commits in between is
   * caught either by the read or by the event.
   */
  async waitForDecision(scope: Scope, reviewId: number, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
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

  private async attributed(principal: Principal, input: DecisionInput): Promise<DecisionInput> {
    const organizationId = principal.scope.organizationId;
    if (organizationId === null || (!principal.user && !isOrganizationAdmin(principal))) return input;
    if (input.reviewer_name !== undefined && input.reviewer_name !== null) {
      throw invalidInput('reviewer_name', "is the deciding person's own name in an organization; leave it out (and name the person with reviewer_id)");
    }
    if (principal.user) {
      if (input.reviewer_id !== undefined && input.reviewer_id !== null && input.reviewer_id !== principal.user.id) {
        throw new AppError(403, `you decide as yourself: reviewer_id must be your own (${principal.user.id}) or left out`);
      }
      return { ...input, reviewer_id: principal.user.id, reviewer_name: principal.user.name };
    }
    if (input.reviewer_id === undefined || input.reviewer_id === null) {
      throw invalidInput('reviewer_id', 'is required with an admin API key: the id of the reviewer or admin of the organization the decision is made for');
    }
    const reviewer = await this.options.people?.findUser(organizationId, input.reviewer_id);
    if (!reviewer) throw notFound('user', input.reviewer_id);
    if (!reviewer.is_active) throw new AppError(422, `user ${reviewer.id} is deactivated and cannot decide`);
    if (reviewer.role === 'viewer') throw new AppError(422, `user ${reviewer.id} is a viewer, who cannot decide; name a reviewer or an admin`);
    return { ...input, reviewer_name: reviewer.name };
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

/** A key that belongs to a registered agent files every review as that agent's. */
function withBoundAgent(principal: Principal, input: ReviewInput): ReviewInput {
  const bound = principal.scope.agentId;
  if (bound === undefined) return input;
  if (input.agent_id !== undefined && input.agent_id !== null && input.agent_id !== bound) {
    throw invalidInput('agent_id', `must be ${bound} or left out: this API key belongs to agent ${bound}`);
  }
  return { ...input, agent_id: bound };
}
