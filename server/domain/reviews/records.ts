/** Reviews, their decisions, feedback and attachments, as the API shows them and the use cases take them. */


/**
 * The records the API exchanges, in the product's words. Field names follow the wire format
 * (snake_case) so a record can be sent as is.
 */

export const URGENCIES = ['low', 'medium', 'high', 'critical'] as const;

export type Urgency = (typeof URGENCIES)[number];

export const REVIEW_STATUSES = ['pending', 'approved', 'rejected', 'modified'] as const;

export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export const DECISION_TYPES = ['approve', 'reject', 'modify'] as const;

export type DecisionType = (typeof DECISION_TYPES)[number];

export const STATUS_AFTER: Record<DecisionType, ReviewStatus> = {
  approve: 'approved',
  reject: 'rejected',
  modify: 'modified',
};

export type Metadata = Record<string, unknown>;

export interface ReviewInput {
  task_type: string;
  proposed_action: string;
  agent_reasoning?: string | null;
  confidence_score?: number | null;
  urgency?: Urgency;
  framework?: string | null;
  metadata?: Metadata | null;
  organization_id?: number | null;
  agent_id?: number | null;
  /** The agent's name, for an agent that has no registered one (a registered agent's name wins). */
  agent_name?: string | null;
}

export interface DecisionInput {
  decision_type: DecisionType;
  reviewer_id?: number | null;
  reviewer_name?: string | null;
  modified_action?: string | null;
  notes?: string | null;
}

export interface DecisionRecord {
  id: number;
  review_id: number;
  decision_type: DecisionType;
  reviewer_id: number | null;
  reviewer_name: string | null;
  modified_action: string | null;
  notes: string | null;
  created_at: string;
  /**
   * The decision's receipt (compact JWS, Ed25519), signed when it was made; null only for
   * decisions recorded before this server signed receipts.
   */
  receipt: string | null;
}

export interface ReviewRecord {
  id: number;
  task_type: string;
  proposed_action: string;
  agent_reasoning: string | null;
  confidence_score: number | null;
  urgency: Urgency;
  framework: string | null;
  metadata: Metadata;
  organization_id: number | null;
  agent_id: number | null;
  /** The registered agent's name when the review was filed, else the `agent_name` it was filed with. */
  agent_name: string | null;
  status: ReviewStatus;
  /** The reviewer (an identifier such as an e-mail) the policy assigned it to. */
  assigned_to: string | null;
  assigned_team: string | null;
  /** The name of the routing rule that matched, if any. */
  routing_rule: string | null;
  created_at: string;
  updated_at: string;
  decided_at: string | null;
  /** When a pending review gets the policy's fail-safe decision; null without a limit. */
  expires_at: string | null;
  /**
   * The latest moment until which some agent is waiting on this review right now (a blocking
   * create, a long-poll of its decision, an MCP `request_review`), in any API process; null
   * when none is, and once decided.
   */
  waiting_until: string | null;
  decision: DecisionRecord | null;
  /** Hosted edition: the approval workflow governing the review, with its votes; absent when none does. */
  workflow?: WorkflowProgress;
  /** Only in the answer to a create that carried files: the review's attachments. */
  attachments?: AttachmentRecord[];
  /** Where people open the review; absent where the dashboard's public address is not known. */
  links?: ReviewLinks;
  /** Hosted edition: the shadow auto-decide rule that would have decided the review; absent when none matched. */
  shadow_rule_id?: number;
  /** Hosted edition: an enforcing auto-decide rule matched and the review was drawn for a person all the same. */
  audit_sample?: true;
  /** With `audit_sample`: the rule that would have decided it. */
  audit_rule_id?: number;
}

export interface ReviewLinks {
  /** `<dashboard>/#/reviews/<id>` */
  dashboard: string;
}

/** The review's links, given the dashboard's address as people reach it (null: not known). */
export function reviewLinks(dashboardUrl: string | null, id: number): ReviewLinks | undefined {
  return dashboardUrl === null ? undefined : { dashboard: `${dashboardUrl.replace(/\/+$/, '')}/#/reviews/${id}` };
}

export const REVIEW_ORDERS = ['newest', 'oldest', 'priority', 'recently_decided', 'waiting_until'] as const;

/**
 * `priority` is the reviewer's queue: most urgent first, then oldest first.
 * `recently_decided` puts the latest decisions first (pending reviews last).
 * `waiting_until` puts first the review whose waiting agent gives up soonest, reviews nobody
 * waits on last (in `priority` order).
 */
export type ReviewOrder = (typeof REVIEW_ORDERS)[number];

export interface ReviewFilters {
  status?: ReviewStatus;
  /** true: any status but pending; false: pending only. */
  decided?: boolean;
  /** Case-insensitive substring of the proposed action. */
  q?: string;
  /** true: pending reviews some agent is waiting on right now; false: the others. */
  waiting?: boolean;
  task_type?: string;
  urgency?: Urgency;
  framework?: string;
  agent_id?: number;
  organization_id?: number;
  assigned_to?: string;
  /** Assigned to one of these people or teams: "Mine" of a signed-in person (hosted edition), from `mine=true`. */
  assigned_to_any?: { people: string[]; teams: string[] };
}

export interface ReviewPage {
  reviews: ReviewRecord[];
  total: number;
  page: number;
  page_size: number;
}

export interface FeedbackInput {
  rating?: number | null;
  comment?: string | null;
}

export interface FeedbackRecord {
  id: number;
  review_id: number;
  rating: number | null;
  comment: string | null;
  created_at: string;
}

export interface AttachmentRecord {
  id: number;
  review_id: number;
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  description: string | null;
  created_at: string;
}

export interface Statistics {
  total_reviews: number;
  pending_reviews: number;
  approved_reviews: number;
  rejected_reviews: number;
  modified_reviews: number;
  avg_confidence_score: number | null;
  avg_seconds_to_decision: number | null;
  task_type_breakdown: Record<string, number>;
  framework_breakdown: Record<string, number>;
  urgency_breakdown: Record<Urgency, number>;
  /** Decisions per UTC day over the last 14 days, oldest first, days without any included. */
  decisions_over_time: DecisionsOnDay[];
}

export interface DecisionsOnDay {
  date: string;
  approved: number;
  rejected: number;
  modified: number;
}

/** How long an `Idempotency-Key` keeps answering with the review it made. */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** A vote cast in a review's approval workflow. */
export interface WorkflowVote {
  user_id: number;
  user_name: string;
  /** The stage (0-based) it was cast in. */
  stage: number;
  decision_type: DecisionType;
  modified_action: string | null;
  notes: string | null;
  created_at: string;
}

/** What a vote that did not decide the review answers (202): where the workflow stands. */
export interface VoteAnswer {
  review_id: number;
  status: 'pending';
  votes: WorkflowVote[];
  workflow: { id: number | null; name: string; stage: number; required_approvals: number; approvals: number };
}

/** Where a review's approval workflow stands. */
export interface WorkflowProgress {
  /** The workflow's id; null for the organization's `require_two_approvals`. */
  id: number | null;
  name: string;
  /** The stage voting now (0-based); equal to the number of stages once all have approved. */
  stage: number;
  stages: Array<{ name: string; required_approvals: number; approvals: number }>;
  votes: WorkflowVote[];
  /** The action as a vote last modified it: the one later votes approve. */
  modified_action: string | null;
  /** The people who may vote now and have not. */
  waiting_on: number[];
  /** Fewer people are left who may vote now than approvals are missing: the review cannot be approved. */
  stuck: boolean;
}

/** A vote of the approval workflow that decided the review, as the receipt names it. */
export interface ReceiptVote {
  user_id: number;
  stage: number;
  decision_type: DecisionType;
}

/** The claims of a receipt (a JWT's payload). */
export interface ReceiptClaims {
  /** The server's `public_url`. */
  iss: string;
  /** The review's id, as text (a JWT's `sub` is a string). */
  sub: string;
  /** Absent for a review of no organization (the self-hosted edition). */
  organization_id?: number;
  iat: number;
  exp: number;
  jti: string;
  decision_type: DecisionType;
  /** Absent when rejected: nothing may run. */
  action_sha256?: string;
  decided_by: Array<number | string>;
  votes: ReceiptVote[];
}
