/**
 * What the domain needs from the world, declared here and implemented outside it: `server/db/`
 * (repositories, the unit of work and its outbox), `server/storage/` (attachment bytes), the
 * event feed's carriers. The domain imports nothing outside `server/domain/`.
 */
import type { Readable } from 'node:stream';
import type { DomainEvent, EventSubject } from './events';
import type { Voter, WorkflowStage, WorkflowState } from './workflow';
import type {
  AttachmentRecord,
  DecisionInput,
  DecisionType,
  FeedbackInput,
  FeedbackRecord,
  ReviewFilters,
  ReviewOrder,
  ReviewRecord,
  ReviewStatus,
  Statistics,
  UserRecord,
  UserRole,
  WebhookDeliveryRecord,
  WebhookRecord,
} from './records';

export { USER_ROLES, type UserRecord, type UserRole } from './records';

/** Whose records a call may see and change. Every repository method takes one. */
export interface Scope {
  /**
   * The caller's organization. Null in the self-hosted edition: one installation holds every
   * record, and `organization_id` is a label agents may set.
   */
  readonly organizationId: number | null;
  /**
   * The registered agent an agent key belongs to: the caller reaches that agent's reviews
   * alone, and what belongs to them; another agent's review is as if it did not exist.
   */
  readonly agentId?: number;
}

/** The self-hosted installation's scope: every record. */
export const INSTALLATION: Scope = { organizationId: null };

export const PRINCIPAL_KINDS = ['api_key', 'user', 'operator', 'anonymous_local'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

/** Who is calling, as authentication established it; never a name the caller typed. */
export interface Principal {
  kind: PrincipalKind;
  scope: Scope;
  /**
   * Stands for the caller where something is kept per caller (idempotency keys): a digest of
   * its API key, never the key; empty for the anonymous local caller.
   */
  id: string;
  /** What an organization's API key may do (hosted edition): everything in it, or an agent's part. */
  access?: KeyScope;
  /** The caller in words, for the audit log: a key's name, a person's name. */
  label?: string;
  /** A signed-in person (hosted edition): who they are and what their role lets them do. */
  user?: { id: number; name: string; role: UserRole };
}

export const KEY_SCOPES = ['admin', 'agent'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** The operator's scope holds no organization's records: the operator key only creates organizations. */
export const NO_ORGANIZATION: Scope = { organizationId: 0 };

/** Whoever holds the operator key (or runs `greenlight org create` on the database's machine). */
export const OPERATOR: Principal = { kind: 'operator', scope: NO_ORGANIZATION, id: 'operator', label: 'operator' };

/** An agent or a reviewer on this machine, where authentication is off. */
export const ANONYMOUS_LOCAL: Principal = { kind: 'anonymous_local', scope: INSTALLATION, id: '' };

/** Milliseconds since the epoch; tests set it to make durations exact. */
export type Clock = () => number;

/**
 * One transaction in progress. Repositories' writes take it; `record` writes an event to the
 * outbox in the same transaction, published to the event feed once, and only once, it commits.
 */
export interface Tx {
  record(event: DomainEvent): void;
  /** Appends an entry to the audit log in this transaction (hosted edition); review events get theirs from `record`. */
  audit(entry: AuditEntryInput): void;
  /**
   * Once this transaction commits, `principalId`'s credential no longer holds: every process
   * ends the live streams and MCP sessions it opened (see `Revocation`).
   */
  revoke(principalId: string): void;
}

export interface WorkOptions {
  /**
   * The work touches nothing but its transaction, so it may be run again from the start and
   * only its last run counts. SQLite then shares a commit among such writes without a savepoint
   * for each; should one of them fail, the shared transaction is rolled back and run again.
   */
  rerunnable?: boolean;
}

/** Runs `work` in one transaction, then publishes the events it recorded. */
export interface UnitOfWork {
  run<T>(work: (tx: Tx) => Promise<T>, options?: WorkOptions): Promise<T>;
}

/** A review as the policy placed it, ready to be stored. */
export interface NewReview {
  organization_id: number | null;
  agent_id: number | null;
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
  insert(tx: Tx, review: NewReview, claim?: IdempotencyClaim): Promise<ReviewRecord>;
  /** The reviewer among `candidates` with the fewest pending reviews; ties go to the first listed. */
  leastBusy(tx: Tx, scope: Scope, candidates: readonly string[]): Promise<string | null>;
  recordDecision(tx: Tx, scope: Scope, reviewId: number, input: DecisionInput, now: number): Promise<DecisionOutcome>;
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
  /** Moves an incoming file where attachments of `reviewId` are kept, durably; returns its storage key. */
  keep(incoming: IncomingFile, reviewId: number): Promise<string>;
  discard(tempPath: string): Promise<void>;
  open(storageKey: string): Readable;
  remove(storageKey: string): Promise<void>;
  exists(storageKey: string): Promise<boolean>;
}

/** What the domain says about its background work. */
export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Background work that must run in one process at a time among those sharing the database. */
export interface OneAtATime {
  /** Runs `work` unless another process is running `task` right now; says whether it ran. */
  run(task: string, work: () => Promise<void>): Promise<boolean>;
}

/** Organizations and their API keys (hosted edition). Keys are found by the SHA-256 of the key. */
export interface OrganizationRepository {
  insertOrganization(tx: Tx, name: string, settings: Record<string, unknown>, now: number): Promise<OrganizationRecord>;
  findOrganization(id: number, tx?: Tx): Promise<OrganizationRecord | null>;
  updateOrganization(tx: Tx, id: number, changes: { name?: string; settings?: Record<string, unknown> }, now: number): Promise<OrganizationRecord | null>;
  insertKey(tx: Tx, key: NewApiKey): Promise<ApiKeyRecord>;
  listKeys(organizationId: number): Promise<ApiKeyRecord[]>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked, unless it already is. */
  revokeKey(tx: Tx, organizationId: number, id: number, now: number): Promise<'revoked' | 'already_revoked' | 'not_found'>;
  /** Records a use of the key, outside any unit of work. */
  touchKey(id: number, now: number): Promise<void>;
}

export interface OrganizationRecord {
  id: number;
  name: string;
  settings: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRecord {
  id: number;
  organization_id: number;
  name: string;
  /** The key's first characters, for people to tell keys apart; never enough to use it. */
  prefix: string;
  scope: KeyScope;
  /** The registered agent an `agent` key belongs to, if any. */
  agent_id: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface NewApiKey {
  organization_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scope: KeyScope;
  agent_id: number | null;
  created_at: number;
}

/** An agent registered with an organization (hosted edition). */
export interface AgentRecord {
  id: number;
  organization_id: number;
  name: string;
  framework: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

export type NewAgent = Omit<AgentRecord, 'id' | 'created_at'> & { created_at: number };

export interface AgentRepository {
  insert(tx: Tx, agent: NewAgent): Promise<AgentRecord>;
  list(organizationId: number): Promise<AgentRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<AgentRecord | null>;
}

/** Who made a change, as the audit log records it. */
export interface AuditActor {
  type: 'api_key' | 'user' | 'operator' | 'system';
  /** `key:<id>` for an API key, `user:<id>` for a person, `operator`; null for the system (expiry). */
  id: string | null;
  /** The key's or the person's name when the change was made (null in entries older than labels). */
  label: string | null;
}

/** An entry as a use case asks for it, in the transaction of its change. */
export interface AuditEntryInput {
  organization_id: number;
  action: string;
  target_type: string;
  target_id: number | null;
  data: Record<string, unknown>;
}

/** The fields an entry's hash covers, besides the hash before it. */
export interface HashedFields extends AuditEntryInput {
  actor: AuditActor;
  created_at: string;
}

export interface AuditRecord extends HashedFields {
  id: number;
  /** The entry's place in its organization's log: 1, 2, 3 … without gaps. */
  sequence: number;
  prev_hash: string;
  hash: string;
}

/** Where an organization's log ends, kept apart from its entries: its newest entry's sequence and hash (0 and the genesis hash before the first). */
export interface AuditHead {
  sequence: number;
  hash: string;
}

/**
 * Whether an organization's log holds, up to its head: `first_invalid_id` names the first entry
 * that does not; null with `valid` false, the entries end before the head (the newest removed).
 */
export interface AuditVerification {
  valid: boolean;
  /** Entries checked. */
  entries: number;
  first_invalid_id: number | null;
  head: AuditHead;
}

export interface AuditFilters {
  action?: string;
  actor_type?: AuditActor['type'];
  actor_id?: string;
  target_type?: string;
  target_id?: number;
  /** Epoch milliseconds, inclusive. */
  since?: number;
  until?: number;
}

/** The audit log: appended in the transaction of each change, never edited. */
export interface AuditRepository {
  /**
   * Appends `entries` to their organizations' chains and moves their heads, in `tx`; appends to
   * one organization's log take turns, so its sequence has no gaps.
   */
  append(tx: Tx, entries: readonly AuditEntryInput[], actor: AuditActor, now: number): Promise<void>;
  /** Newest first, below the id `before` when given. */
  list(organizationId: number, filters: AuditFilters, before: number | null, limit: number): Promise<AuditRecord[]>;
  /** In sequence, after the sequence `after`: the chain in pages, for verification. */
  chain(organizationId: number, after: number, limit: number): Promise<AuditRecord[]>;
  head(organizationId: number): Promise<AuditHead>;
}

export type NewUser = Pick<UserRecord, 'organization_id' | 'email' | 'name' | 'role'> & { created_at: number };

export interface TeamMember {
  id: number;
  email: string;
  name: string;
  role: UserRole;
}

export interface TeamRecord {
  id: number;
  organization_id: number;
  name: string;
  members: TeamMember[];
  settings: Record<string, unknown>;
  created_at: string;
}

/** The people of an organization and their teams (hosted edition). */
export interface PeopleRepository {
  /** The new user, or null when the organization already has one with that e-mail. */
  insertUser(tx: Tx, user: NewUser): Promise<UserRecord | null>;
  listUsers(organizationId: number): Promise<UserRecord[]>;
  findUser(organizationId: number, id: number, tx?: Tx): Promise<UserRecord | null>;
  updateUser(tx: Tx, organizationId: number, id: number, changes: Partial<Pick<UserRecord, 'name' | 'role' | 'is_active'>>, now: number): Promise<UserRecord | null>;
  /**
   * The ids of the organization's active admins, their rows held until the transaction ends
   * (PostgreSQL; SQLite's writes take turns anyway): changes that could leave it without one
   * take turns, and each sees what the one before it did.
   */
  lockActiveAdmins(tx: Tx, organizationId: number): Promise<number[]>;
  insertTeam(tx: Tx, team: { organization_id: number; name: string; settings: Record<string, unknown>; created_at: number }): Promise<number>;
  listTeams(organizationId: number): Promise<TeamRecord[]>;
  findTeam(organizationId: number, id: number, tx?: Tx): Promise<TeamRecord | null>;
  /** Adds (or, with `member` false, removes) a member; false when the user already was (or was not) one. */
  setMember(tx: Tx, teamId: number, userId: number, member: boolean): Promise<boolean>;
  /** The names of the teams a user is a member of. */
  teamNamesOf(userId: number): Promise<string[]>;
}

/** A user as signing in sees them: with their password's hash and their organization's name. */
export interface UserCredentials {
  user: UserRecord;
  passwordHash: string | null;
  organizationName: string;
}

export interface NewSession {
  /** SHA-256 of the cookie's token; the token itself is never stored. */
  token_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

/** Passwords, invitation links and sessions of the hosted edition's people. */
export interface SignInRepository {
  /** Active users with this (normalized) e-mail, in every organization. */
  findByEmail(email: string): Promise<UserCredentials[]>;
  /** The user a live invitation link (by its token's hash) belongs to. */
  findByInvitation(tokenHash: string, now: number): Promise<UserCredentials | null>;
  /** Replaces the user's invitation link: an earlier one stops working. */
  setInvitation(tx: Tx, userId: number, tokenHash: string, expiresAt: number): Promise<void>;
  /** Sets the password and uses up the invitation link. */
  setPassword(tx: Tx, userId: number, passwordHash: string, now: number): Promise<void>;
  insertSession(tx: Tx, session: NewSession): Promise<void>;
  /** The session's active user, or null for an unknown, expired or deactivated one. */
  findSession(tokenHash: string, now: number): Promise<(UserCredentials & { expiresAt: number }) | null>;
  deleteSession(tx: Tx, tokenHash: string): Promise<void>;
  /** Ends every session of a user (deactivated). */
  deleteSessionsOf(tx: Tx, userId: number): Promise<void>;
  /** The names of the teams a user is a member of. */
  teamNamesOf(userId: number): Promise<string[]>;
  /** Forgets a user's expired sessions: done at each sign-in, so that they do not pile up. */
  deleteExpiredSessions(tx: Tx, userId: number, now: number): Promise<void>;
}

export interface RoutingRuleRecord {
  id: number;
  organization_id: number;
  name: string;
  /** The higher is tried first; ties by the lower id. */
  priority: number;
  /** Field or metadata path → condition, in the routing setting's language. */
  conditions: Record<string, unknown>;
  assign_to_user_id: number | null;
  assign_to_team_id: number | null;
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

export type RoutingRuleFields = Pick<RoutingRuleRecord, 'name' | 'priority' | 'conditions' | 'assign_to_user_id' | 'assign_to_team_id' | 'is_active'>;

/** A rule with whom it assigns to, by the names reviews record: the person's e-mail, the team's name. */
export interface RoutableRule extends RoutingRuleRecord {
  assignee_email: string | null;
  team_name: string | null;
}

/** An organization's routing rules (hosted edition). */
export interface RoutingRuleRepository {
  /** The new rule, or null when the organization has a rule of that name. */
  insert(tx: Tx, organizationId: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null>;
  /** Oldest first. */
  list(organizationId: number): Promise<RoutingRuleRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<RoutingRuleRecord | null>;
  /** The rule as changed; null when it is not the organization's; 'name_taken' when another rule has the new name. */
  update(tx: Tx, organizationId: number, id: number, rule: RoutingRuleFields, now: number): Promise<RoutingRuleRecord | null | 'name_taken'>;
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** Every rule of the organization with its assignee's e-mail and team's name, oldest first. */
  routable(organizationId: number, tx?: Tx): Promise<RoutableRule[]>;
}

export interface WorkflowRecord {
  id: number;
  organization_id: number;
  name: string;
  /** Which reviews it governs, in the routing rules' condition language; none: every review. */
  conditions: Record<string, unknown>;
  stages: WorkflowStage[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

export type WorkflowFields = Pick<WorkflowRecord, 'name' | 'conditions' | 'stages' | 'is_active'>;

/** An organization's approval workflows, and the state of the reviews they govern (hosted edition). */
export interface WorkflowRepository {
  insert(tx: Tx, organizationId: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord>;
  /** Oldest first: the order in which they are matched against a new review. */
  list(organizationId: number, tx?: Tx): Promise<WorkflowRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<WorkflowRecord | null>;
  update(tx: Tx, organizationId: number, id: number, workflow: WorkflowFields, now: number): Promise<WorkflowRecord | null>;
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** A review's workflow state, its row held until the transaction ends (PostgreSQL: FOR UPDATE); null when none governs it. */
  lockState(tx: Tx, organizationId: number, reviewId: number): Promise<WorkflowState | null>;
  saveState(tx: Tx, reviewId: number, organizationId: number, state: WorkflowState, now: number, isNew: boolean): Promise<void>;
  statesOf(reviewIds: readonly number[]): Promise<Map<number, WorkflowState>>;
  /** The organization's active people, with their role and teams: who may vote. */
  voters(organizationId: number, tx?: Tx): Promise<Voter[]>;
}

/** An endpoint of the self-hosted installation, as the `webhooks` setting names it. */
export interface ConfiguredWebhook {
  url: string;
  secret: string;
  events: string[];
}

export interface WebhookFields {
  url: string;
  events: string[];
  description: string | null;
  is_active: boolean;
}

/** A delivery a dispatcher holds, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  /** Null for an endpoint of the self-hosted installation. */
  organization_id: number | null;
  message_id: string;
  payload: string;
  attempts: number;
  url: string;
  /** The secrets to sign with: the current one, and the previous one during a rotation. */
  secrets: string[];
}

/** How many more deliveries a dispatcher may send at once, and of whose. */
export interface DeliveryRoom {
  /** In all. */
  total: number;
  /** Of an organization that has none in flight here. */
  perOrganization: number;
  /** Of each organization (null: the self-hosted installation) that has some in flight here: what is left of its share. */
  organizations: ReadonlyMap<number | null, number>;
  /** Endpoints with a delivery in flight here: one at a time each. */
  busyEndpoints: readonly number[];
}

/** What one attempt came to. */
export type AttemptOutcome =
  | { kind: 'delivered'; statusCode: number; durationMs: number }
  | { kind: 'retry'; nextAttemptAt: number; statusCode: number | null; error: string; durationMs: number }
  | { kind: 'failed'; statusCode: number | null; error: string; durationMs: number };

/** An organization's webhook endpoints and their deliveries (hosted edition). */
export interface WebhookRepository {
  insert(tx: Tx, organizationId: number, fields: WebhookFields, secret: string, now: number): Promise<WebhookRecord>;
  /** How many endpoints the organization has; racing creates count one after another (its row stays locked until `tx` ends). */
  countForUpdate(tx: Tx, organizationId: number): Promise<number>;
  list(organizationId: number): Promise<WebhookRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<WebhookRecord | null>;
  update(tx: Tx, organizationId: number, id: number, fields: WebhookFields, now: number): Promise<WebhookRecord | null>;
  /** Deletes the endpoint and its deliveries. */
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** A new secret; the one before it keeps signing too until `previousUntil`. */
  rotateSecret(tx: Tx, organizationId: number, id: number, secret: string, previousUntil: number, now: number): Promise<boolean>;
  /** The active endpoints of the organization (null: the self-hosted installation's) that receive `eventType`. */
  subscribers(tx: Tx, organizationId: number | null, eventType: string): Promise<number[]>;
  /** Makes the installation's endpoints those of the `webhooks` setting: added, changed, or removed with their deliveries. */
  syncInstallationWebhooks(configured: readonly ConfiguredWebhook[], now: number): Promise<void>;
  enqueue(tx: Tx, deliveries: Array<{ webhook_id: number; message_id: string; event_type: string; payload: string }>, now: number): Promise<void>;
  /**
   * Holds due deliveries until `claimedUntil`, as many as `room` allows and no more: each the
   * next of its endpoint, none of an endpoint another process is sending to, the earliest due
   * first. Several processes never hold the same one.
   */
  claimDue(now: number, claimedUntil: number, room: DeliveryRoom): Promise<ClaimedDelivery[]>;
  /** When a delivery `room` would let through is next due (or its claim by another process runs out), or null. */
  nextDue(now: number, room: DeliveryRoom): Promise<number | null>;
  /**
   * At start: gives back the deliveries a process that died was sending, where no other can be
   * sending them (SQLite: one process owns the file). On PostgreSQL their claims run out instead.
   */
  releaseOrphanedClaims(): Promise<void>;
  recordAttempt(deliveryId: number, outcome: AttemptOutcome, now: number): Promise<void>;
  /** Stops an endpoint: inactive, with why, and its pending deliveries failed. */
  disable(tx: Tx, webhookId: number, reason: string, now: number): Promise<void>;
  /** Newest first, below the id `before`. */
  deliveries(organizationId: number, webhookId: number, before: number | null, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** Sends a delivery again at once (pending, due now); false when it is not the endpoint's. */
  retry(tx: Tx, organizationId: number, webhookId: number, deliveryId: number, now: number): Promise<boolean>;
}
