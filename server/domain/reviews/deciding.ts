import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import { domainEvent } from '../shared/events';
import type { Actor, Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { DecisionOutcome, ReviewRepository } from './ports';
import type { PeopleRepository } from '../people/ports';
import { requireDecider } from '../people/deciders';
import type { Principal, Scope } from '../shared/principal';
import type { DecisionInput, DecisionRecord, VoteAnswer, WorkflowVote } from './records';
import type { DecisionReceipts } from './receipts';
import { isOrganizationAdmin } from '../shared/scope';
import { castVote, progressOf } from '../workflows/voting';
import type { Workflows } from '../workflows/workflows';

export interface DecideReviewOptions {
  reviews: Pick<ReviewRepository, 'recordDecision' | 'findById'>;
  /** An organization's people: its decisions are theirs, by id (hosted edition). */
  people?: Pick<PeopleRepository, 'findUser'>;
  /** Approval workflows: a governed review is decided by votes (hosted edition). */
  workflows?: Pick<Workflows, 'lock' | 'votersAndProgress' | 'save'>;
  /** Every decision is recorded with its signed receipt. */
  receipts: Pick<DecisionReceipts, 'attach'>;
  unitOfWork: UnitOfWork;
  clock?: Clock;
}

/** A decision, or, in a review an approval workflow governs, a vote that did not yet decide it. */
export type DecideOutcome = { kind: 'decided'; decision: DecisionRecord } | { kind: 'voted'; vote: VoteAnswer };

/** Deciding a review: a person's decision (or vote), or the system's (an expiry). Of two at once, one wins. */
export class DecideReview {
  private readonly clock: Clock;

  constructor(private readonly options: DecideReviewOptions) {
    this.clock = options.clock ?? Date.now;
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
      return { kind: 'decided', decision: await this.decide(principal.scope, reviewId, attributed, principal) };
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
        return this.recorded(tx, await this.options.reviews.recordDecision(tx, principal.scope, reviewId, final, now), vote.state.votes);
      }
      const progress = progressOf(vote.state, voters);
      tx.record(domainEvent('review.vote', review, { ...review, workflow: progress }));
      const stage = progress.stages[Math.min(progress.stage, progress.stages.length - 1)];
      return {
        kind: 'voted',
        vote: { review_id: reviewId, status: 'pending', votes: progress.votes, workflow: { id: progress.id, name: progress.name, stage: progress.stage, required_approvals: stage.required_approvals, approvals: stage.approvals } },
      };
    }, { by: principal });
    if ('kind' in result) return result;
    return { kind: 'decided', decision: this.answer(reviewId, result) };
  }

  /** A decision on a review in `scope`, made `by` its caller or by the system (an expiry). */
  async decide(scope: Scope, reviewId: number, input: DecisionInput, by: Actor): Promise<DecisionRecord> {
    refuseNul(input);
    checkDecisionShape(input);
    const now = this.clock();
    const result = await this.options.unitOfWork.run(async (tx) => this.recorded(tx, await this.options.reviews.recordDecision(tx, scope, reviewId, input, now)), { by });
    return this.answer(reviewId, result);
  }

  /**
   * A decision recorded in `tx` has its receipt signed and its event recorded with it: the
   * `review.decided` webhook carries the receipt every later read answers with.
   */
  private async recorded(tx: Tx, outcome: DecisionOutcome, votes: readonly WorkflowVote[] = []): Promise<DecisionOutcome> {
    if (outcome.outcome !== 'recorded') return outcome;
    const review = await this.options.receipts.attach(tx, outcome.review, votes);
    tx.record(domainEvent('review.decided', review, review));
    return { ...outcome, review };
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
    requireDecider(reviewer, 'reviewer_id', 'name an active reviewer or admin of the organization');
    return { ...input, reviewer_name: reviewer.name };
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
