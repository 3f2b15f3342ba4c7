/** What the review use cases need from the world: repositories of reviews, feedback and attachments, attachment bytes, statistics. Implemented by `server/db/` and `server/storage/`. */

import type { Readable } from 'node:stream';
import type { EventSubject } from '../shared/events';
import type { Scope } from '../shared/principal';
import type { Tx } from '../shared/unit-of-work';
import type { AttachmentRecord, DecisionInput, DecisionType, FeedbackInput, FeedbackRecord, ReceiptClaims, ReviewFilters, ReviewOrder, ReviewRecord, ReviewStatus, Statistics } from './records';

/** A review as the policy placed it, ready to be stored. */
export interface NewReview {
  organization_id: number | null;
  agent_id: number | null;
  agent_name: string | null;
  /**
   * `agent_id` must name one of the organization's registered agents: the review is stored under
   * that agent's registered name, whatever `agent_name` says, or not at all.
   */
  registeredAgent: boolean;
  task_type: string;
  proposed_action: string;
  agent_reasoning: string | null;
  confidence_score: number | null;
  urgency: ReviewRecord['urgency'];
  framework: string | null;
  metadata: Record<string, unknown>;
  assigned_to: string | null;
  assigned_team: string | null;
  routing_rule: string | null;
  created_at: number;
  expires_at: number | null;
  /** A routing rule's decision, stored with the review. */
  autoDecision: { decision_type: DecisionType; reviewer_name: string; notes: string } | null;
}

/** An `Idempotency-Key` as one caller used it with one request body. */
export interface IdempotencyClaim {
  /** The caller (`Principal.id`). */
  caller: string;
  key: string;
  /** SHA-256 of the request body, so a reuse with another body can be told apart. */
  requestHash: string;
}

export type DecisionOutcome =
  | { outcome: 'recorded'; review: ReviewRecord }
  | { outcome: 'not_found' }
  | { outcome: 'already_decided'; review: ReviewRecord };

export interface DueReview {
  id: number;
  organization_id: number | null;
  urgency: ReviewRecord['urgency'];
  created_at: number;
  expires_at: number;
}

export interface ReviewRepository {
  /** Null when the review names a registered agent (`registeredAgent`) its organization does not have. */
  insert(tx: Tx, review: NewReview, claim?: IdempotencyClaim): Promise<ReviewRecord | null>;
  /** The reviewer among `candidates` with the fewest pending reviews; ties go to the first listed. */
  leastBusy(tx: Tx, scope: Scope, candidates: readonly string[]): Promise<string | null>;
  recordDecision(tx: Tx, scope: Scope, reviewId: number, input: DecisionInput, now: number): Promise<DecisionOutcome>;
  /** Stores a decision's receipt beside it, in the transaction that recorded it. */
  attachReceipt(tx: Tx, decisionId: number, receipt: string): Promise<void>;
  /** In `tx` when given: a read inside a transaction must not wait for another connection of the pool. */
  findById(scope: Scope, id: number, tx?: Tx): Promise<ReviewRecord | null>;
  /** `scope` says the organization; the filters say the rest. */
  list(scope: Scope, filters: Omit<ReviewFilters, 'organization_id'>, page: number, pageSize: number, order: ReviewOrder): Promise<{ reviews: ReviewRecord[]; total: number }>;
  exists(scope: Scope, id: number): Promise<boolean>;
  /** The review a live key made, and the digest of the body it came with. */
  findClaim(scope: Scope, caller: string, key: string, now: number): Promise<{ reviewId: number; requestHash: string } | null>;
  /** The earliest expiry among pending reviews of every organization: the timer serves them all. */
  nextExpiry(): Promise<number | null>;
  dueForExpiry(now: number, limit: number): Promise<DueReview[]>;
}

/**
 * The agents waiting on reviews right now, as every API process sharing the database sees them:
 * a review's `waiting_until` is the latest `until` of its waits that has not passed.
 */
export interface ReviewWaitRepository {
  /**
   * Records a wait until `until`; `raised` says whether it moved the review's `waiting_until`
   * later, `latest` is that moment now.
   */
  start(tx: Tx, reviewId: number, until: number, now: number): Promise<{ id: number; raised: boolean; latest: number | null }>;
  /** Removes a wait; `lowered` says whether the review's `waiting_until` moved earlier (or to none), `latest` is what it is now. */
  end(tx: Tx, waitId: number, now: number): Promise<{ lowered: boolean; latest: number | null }>;
  /** Removes every wait this process holds: it is shutting down, and its waiters were answered. */
  endAllOfThisProcess(): Promise<void>;
}

/** Signs a decision's receipt with the installation's current key, read in `tx`: every process signs with the same one. */
export interface ReceiptSigner {
  sign(tx: Tx, claims: ReceiptClaims): Promise<string>;
}

export interface FeedbackRepository {
  /** Null when the review does not exist in `scope`; else the record and its review. */
  insert(tx: Tx, scope: Scope, reviewId: number, input: FeedbackInput, now: number): Promise<{ record: FeedbackRecord; review: EventSubject } | null>;
  listFor(scope: Scope, reviewId: number): Promise<FeedbackRecord[]>;
}

export interface NewAttachment {
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  description: string | null;
}

/** What an upload or a deletion may change of a review's attachments. */
export interface AttachmentRules {
  /** Only while the review is pending: once decided, its evidence is what the decision was made on. */
  pendingOnly: boolean;
}

/** A review its evidence could not be changed on: decided, with this status. */
export interface EvidenceFixed {
  outcome: 'review_decided';
  review_id: number;
  status: ReviewStatus;
}

export type AttachmentInsert =
  | { outcome: 'inserted'; attachment: AttachmentRecord; storageKey: string; review: EventSubject }
  | { outcome: 'review_not_found' }
  | { outcome: 'limit_reached' }
  | EvidenceFixed;

export interface StoredAttachment {
  attachment: AttachmentRecord;
  storageKey: string;
}

export type AttachmentDeletion = { outcome: 'deleted'; stored: StoredAttachment; review: EventSubject } | { outcome: 'not_found' } | EvidenceFixed;

export interface AttachmentRepository {
  countFor(scope: Scope, reviewId: number): Promise<number>;
  /**
   * Checks the review, the rules and the per-review limit, lets `place` put the bytes where they
   * belong and records the row, with the review's row locked: racing uploads count one after
   * another, and a decision recorded meanwhile is seen.
   */
  insert(tx: Tx, scope: Scope, reviewId: number, attachment: NewAttachment, rules: AttachmentRules & { maxPerReview: number }, now: number, place: () => Promise<string>): Promise<AttachmentInsert>;
  findById(scope: Scope, id: number): Promise<StoredAttachment | null>;
  listFor(scope: Scope, reviewId: number): Promise<AttachmentRecord[]>;
  /** Deletes the row, with its review's row locked as `insert` does; returns it so the caller can remove the bytes after the commit. */
  delete(tx: Tx, scope: Scope, id: number, rules: AttachmentRules): Promise<AttachmentDeletion>;
}

export interface StatisticsSource {
  /** The figures of GET /stats over the reviews in `scope`. */
  statistics(scope: Scope, now: number): Promise<Statistics>;
}

/** An upload written to a holding place, not yet attached to a review. */
export interface IncomingFile {
  tempPath: string;
  size: number;
  sha256: string;
}

/** Where attachment bytes live (the local disk under `data_dir`; another store later). */
export interface BlobStore {
  /** Writes `source` to a holding place, measuring and hashing it; rejects past `maxBytes` (nothing is kept). */
  receive(source: Readable, maxBytes: number): Promise<IncomingFile>;
  /** Moves an incoming file where attachments of `reviewId` are kept, durably; returns its storage key. */
  keep(incoming: IncomingFile, reviewId: number): Promise<string>;
  discard(tempPath: string): Promise<void>;
  open(storageKey: string): Readable;
  remove(storageKey: string): Promise<void>;
  exists(storageKey: string): Promise<boolean>;
}
