/**
 * Decision receipts: a signed statement, minted once when a decision is recorded, that this
 * server decided this review this way about exactly this action. An executor checks it offline
 * against the action it is about to run (docs/receipts.md).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Tx } from '../shared/unit-of-work';
import type { ReceiptSigner, ReviewRepository } from './ports';
import type { DecisionRecord, ReceiptClaims, ReviewRecord, WorkflowVote } from './records';

/**
 * The SHA-256 (lowercase hex) of the action's text as stored, its UTF-8 bytes exactly: no
 * trimming, no Unicode normalisation, no re-serialising of JSON. A tool call's arguments are
 * checked by hashing the text the client sent (or the reviewer's edit it parses them from).
 */
export function actionSha256(action: string): string {
  return createHash('sha256').update(action, 'utf8').digest('hex');
}

/** The action the decision lets run: the proposed one when approved, the modified one when modified, none when rejected. */
export function actionThatMayRun(review: Pick<ReviewRecord, 'proposed_action'>, decision: Pick<DecisionRecord, 'decision_type' | 'modified_action'>): string | null {
  if (decision.decision_type === 'approve') return review.proposed_action;
  if (decision.decision_type === 'modify') return decision.modified_action;
  return null;
}

/**
 * Who made the decision: the ids of the people whose votes decided it in an approval workflow
 * (the approvers, or the one who rejected), else the deciding person's id; without a person of
 * an organization, the name the decision was recorded under (`rule:<name>` for a routing
 * rule, `policy:expired` for the expiry's fail-safe, a self-hosted reviewer's name as given).
 */
export function decidedBy(decision: Pick<DecisionRecord, 'decision_type' | 'reviewer_id' | 'reviewer_name'>, votes: readonly WorkflowVote[]): Array<number | string> {
  if (votes.length > 0) {
    const deciding = decision.decision_type === 'reject' ? votes.filter((vote) => vote.decision_type === 'reject') : votes;
    return [...new Set(deciding.map((vote) => vote.user_id))];
  }
  if (decision.reviewer_id !== null) return [decision.reviewer_id];
  return decision.reviewer_name === null ? [] : [decision.reviewer_name];
}

export interface ReceiptClaimsInput {
  review: Pick<ReviewRecord, 'id' | 'organization_id' | 'proposed_action'>;
  decision: DecisionRecord;
  votes: readonly WorkflowVote[];
  issuer: string;
  ttlSeconds: number;
  jti: string;
}

/** The claims of a decision's receipt: issued when the decision was made, valid `ttlSeconds` from then. */
export function receiptClaims({ review, decision, votes, issuer, ttlSeconds, jti }: ReceiptClaimsInput): ReceiptClaims {
  const iat = Math.floor(Date.parse(decision.created_at) / 1000);
  const action = actionThatMayRun(review, decision);
  return {
    iss: issuer,
    sub: String(review.id),
    ...(review.organization_id === null ? {} : { organization_id: review.organization_id }),
    iat,
    exp: iat + ttlSeconds,
    jti,
    decision_type: decision.decision_type,
    ...(action === null ? {} : { action_sha256: actionSha256(action) }),
    decided_by: decidedBy(decision, votes),
    votes: votes.map((vote) => ({ user_id: vote.user_id, stage: vote.stage, decision_type: vote.decision_type })),
  };
}

export interface DecisionReceiptsOptions {
  signer: ReceiptSigner;
  reviews: Pick<ReviewRepository, 'attachReceipt'>;
  /** `iss`: the server's `public_url`. */
  issuer: string;
  /** `receipt_ttl_seconds`. */
  ttlSeconds: number;
}

/** Mints a decision's receipt in the transaction that records the decision, and stores it with it. */
export class DecisionReceipts {
  constructor(private readonly options: DecisionReceiptsOptions) {}

  /** The review, decided in `tx`, with its decision's receipt signed and stored. */
  async attach(tx: Tx, review: ReviewRecord, votes: readonly WorkflowVote[] = []): Promise<ReviewRecord> {
    const decision = review.decision;
    if (!decision) return review;
    const { issuer, ttlSeconds } = this.options;
    const receipt = await this.options.signer.sign(tx, receiptClaims({ review, decision, votes, issuer, ttlSeconds, jti: randomUUID() }));
    await this.options.reviews.attachReceipt(tx, decision.id, receipt);
    return { ...review, decision: { ...decision, receipt } };
  }
}
