import type { DecideOutcome } from '../reviews/deciding';
import type { DecisionInput, ReviewRecord } from '../reviews/records';
import { AppError } from '../shared/errors';
import type { Principal, Scope } from '../shared/principal';
import type { Log } from '../shared/unit-of-work';
import type { ChatDeciders, ChatProvider } from './ports';
import type { ChatInteraction, ChatMessageRef, ChatUser } from './records';

/** What the transport answers the chat with. */
export type ChatReply =
  /** Received; anything to say is said apart (an ephemeral message, the message's update). */
  | { kind: 'ack' }
  /** A submitted form stays open, with these errors under its inputs. */
  | { kind: 'form_errors'; errors: Partial<Record<'reason' | 'action', string>> };

export interface ChatInteractionsOptions {
  provider: ChatProvider;
  deciders: ChatDeciders;
  /** The dashboard's use cases: the same decisions, votes and races. */
  decideAs: (principal: Principal, reviewId: number, input: DecisionInput) => Promise<DecideOutcome>;
  review: (scope: Scope, reviewId: number) => Promise<ReviewRecord>;
  dashboardUrl: (reviewId: number) => string;
  log: Log;
}

const ACK: ChatReply = { kind: 'ack' };

/** Why an error refused a click, for the person who clicked. */
function refusal(error: unknown, reviewId: number): string | null {
  if (!(error instanceof AppError)) return null;
  if (error.status === 409) {
    const decision = error.members.decision as { decision_type?: string; reviewer_name?: string | null } | undefined;
    return `Review #${reviewId} was already decided${decision?.reviewer_name ? ` by ${decision.reviewer_name}` : ''}: nothing changed.`;
  }
  if (error.status === 404) return `Review #${reviewId} is not one you can see: nothing changed.`;
  return `${error.detail}. Nothing changed.`;
}

/**
 * Clicks and forms from a chat, decided by the dashboard's own use cases as the person the chat
 * user maps to: Approve decides (or votes); Reject and Modify open a form first, whose submission
 * decides. Anyone who may not decide is told so where only they see it, and nothing changes. The
 * message itself is brought up to date by the outbox, like any change made anywhere.
 */
export class ChatInteractions {
  constructor(private readonly options: ChatInteractionsOptions) {}

  async handle(interaction: ChatInteraction): Promise<ChatReply> {
    if (interaction.kind === 'ignored') return ACK;
    const decider = await this.options.deciders.deciderOf(interaction.user);
    if (!decider.ok) {
      await this.tell(interaction.message, interaction.user, decider.reason);
      return ACK;
    }
    if (interaction.kind === 'button') {
      if (interaction.action === 'approve') {
        await this.decide(decider.principal, interaction.review_id, { decision_type: 'approve', reviewer_name: decider.reviewer_name }, interaction.message, interaction.user);
        return ACK;
      }
      await this.openForm(decider.principal, interaction.action, interaction.review_id, interaction.trigger_id, interaction.message, interaction.user);
      return ACK;
    }
    const input: DecisionInput =
      interaction.action === 'reject'
        ? { decision_type: 'reject', reviewer_name: decider.reviewer_name, notes: interaction.reason }
        : { decision_type: 'modify', reviewer_name: decider.reviewer_name, notes: interaction.reason, modified_action: interaction.modified_action };
    if (input.decision_type === 'modify' && (input.modified_action ?? '').trim() === '') return { kind: 'form_errors', errors: { action: 'Write the action to approve instead, or use Reject.' } };
    await this.decide(decider.principal, interaction.review_id, input, interaction.message, interaction.user);
    return ACK;
  }

  private async decide(principal: Principal, reviewId: number, input: DecisionInput, message: ChatMessageRef | null, user: ChatUser): Promise<void> {
    try {
      // The decision is the person's in the audit log, as a signed-in person's is.
      const outcome = await this.options.decideAs(principal, reviewId, input);
      if (outcome.kind === 'voted') {
        const { workflow } = outcome.vote;
        await this.tell(message, user, `Your approval of review #${reviewId} is counted: ${workflow.approvals} of ${workflow.required_approvals} in ${workflow.name}.`);
      }
    } catch (error) {
      const reason = refusal(error, reviewId);
      if (reason === null) throw error;
      await this.tell(message, user, reason);
    }
  }

  /** The form a Reject or Modify opens, once the review is known to be the person's and still pending. */
  private async openForm(principal: Principal, kind: 'reject' | 'modify', reviewId: number, trigger: string, message: ChatMessageRef | null, user: ChatUser): Promise<void> {
    let review: ReviewRecord;
    try {
      review = await this.options.review(principal.scope, reviewId);
    } catch (error) {
      const reason = refusal(error, reviewId);
      if (reason === null) throw error;
      await this.tell(message, user, reason);
      return;
    }
    if (review.status !== 'pending') {
      await this.tell(message, user, `Review #${reviewId} was already decided (${review.status}${review.decision?.reviewer_name ? ` by ${review.decision.reviewer_name}` : ''}): nothing changed.`);
      return;
    }
    // The action a vote may already have modified is the one later votes approve.
    const action = review.workflow?.modified_action ?? review.proposed_action;
    const dashboard_url = this.options.dashboardUrl(reviewId);
    await this.options.provider.openForm(trigger, kind === 'reject' ? { kind, review_id: reviewId, message } : { kind, review_id: reviewId, message, action, dashboard_url });
  }

  /** A message only `user` sees, beside the review's message; without one, the log keeps it. */
  private async tell(message: ChatMessageRef | null, user: ChatUser, text: string): Promise<void> {
    if (message === null) {
      this.options.log.info('a chat user could not be told why nothing changed (no message to answer beside)', { user: user.user_id, text });
      return;
    }
    await this.options.provider.tellOnly(message.channel, user, text);
  }
}
