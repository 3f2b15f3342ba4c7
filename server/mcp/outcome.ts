import type { ReviewRecord, ReviewStatus, Urgency } from '../domain/reviews/records';

/**
 * What an agent learns about a review through MCP: in `structuredContent` for programs, and
 * as text written so that a model cannot misread it — the first word is the verdict.
 */
export interface ReviewOutcome {
  review_id: number;
  status: ReviewStatus;
  /** What the agent may carry out now; null while pending and after a rejection. */
  action_to_take: string | null;
  task_type: string;
  urgency: Urgency;
  proposed_action: string;
  created_at: string;
  assigned_to: string | null;
  decision: {
    decision_type: 'approve' | 'reject' | 'modify';
    reviewer_name: string | null;
    notes: string | null;
    modified_action: string | null;
    decided_at: string;
    /** The decision's signed receipt, the same the API answers with. */
    receipt: string | null;
  } | null;
}

export function reviewOutcome(review: ReviewRecord): ReviewOutcome {
  const decision = review.decision;
  return {
    review_id: review.id,
    status: review.status,
    action_to_take: actionToTake(review),
    task_type: review.task_type,
    urgency: review.urgency,
    proposed_action: review.proposed_action,
    created_at: review.created_at,
    assigned_to: review.assigned_to,
    decision: decision && {
      decision_type: decision.decision_type,
      reviewer_name: decision.reviewer_name,
      notes: decision.notes,
      modified_action: decision.modified_action,
      decided_at: decision.created_at,
      receipt: decision.receipt,
    },
  };
}

function actionToTake(review: ReviewRecord): string | null {
  if (review.status === 'approved') return review.proposed_action;
  if (review.status === 'modified') return review.decision?.modified_action ?? null;
  return null;
}

/** Why the review is still pending when the tool answers. */
export type PendingReason =
  | { kind: 'not_waited' }
  | { kind: 'timed_out'; waitedSeconds: number }
  /** The wait asked for was longer than the client would hold the call: the agent should wait again. */
  | { kind: 'answered_early'; waitedSeconds: number }
  | { kind: 'unavailable'; reason: string };

function byWhom(review: ReviewRecord): string {
  const name = review.decision?.reviewer_name;
  return name ? ` by ${name}` : '';
}

function notesLine(review: ReviewRecord): string {
  const notes = review.decision?.notes;
  return notes ? `\nReviewer's notes: ${notes}` : '';
}

function checkLater(reviewId: number, pending: PendingReason): string {
  const dont = 'Do not carry out the action yet.';
  const status = 'check_review_status shows where it stands.';
  if (pending.kind === 'answered_early') {
    const again = `{"review_id": ${reviewId}, "wait_seconds": ${pending.waitedSeconds}}`;
    return `${dont} To keep waiting, call get_review_decision with ${again} now, and again each time it answers "pending"; ${status}`;
  }
  return `${dont} To wait for the decision, call get_review_decision with {"review_id": ${reviewId}, "wait_seconds": 300}; ${status}`;
}

/** The text an agent's model reads. The verdict comes first, in the words the tools' descriptions promise. */
export function describeOutcome(review: ReviewRecord, pending: PendingReason = { kind: 'not_waited' }): string {
  switch (review.status) {
    case 'approved':
      return `approved\nReview ${review.id} was approved${byWhom(review)}: carry out the proposed action as proposed.${notesLine(review)}`;
    case 'rejected':
      return `rejected: ${review.decision?.notes || 'no reason given'}\nReview ${review.id} was rejected${byWhom(review)}: do not carry out the proposed action.`;
    case 'modified':
      return `modified: use this action instead: ${review.decision?.modified_action ?? ''}\nReview ${review.id} was modified${byWhom(review)}: carry out the action above, not the one you proposed.${notesLine(review)}`;
    case 'pending':
      return `pending\n${pendingExplanation(review.id, pending)} ${checkLater(review.id, pending)}`;
  }
}

function pendingExplanation(reviewId: number, pending: PendingReason): string {
  switch (pending.kind) {
    case 'not_waited':
      return `Review ${reviewId} is waiting for a person to decide.`;
    case 'timed_out':
      return `No decision on review ${reviewId} within ${pending.waitedSeconds} s; it stays pending.`;
    case 'answered_early':
      return `No decision on review ${reviewId} yet after ${pending.waitedSeconds} s; answering now so that your MCP client does not time out.`;
    case 'unavailable':
      return `Stopped waiting for review ${reviewId} because ${pending.reason}; it stays pending.`;
  }
}
