import { literal, Op, type Order, QueryTypes, type Transaction, UniqueConstraintError, type WhereOptions } from 'sequelize';
import { URGENCY_RANK_SQL } from './migrations/0004-queue-order';
import type { CombinedWrites, Database } from './database';
import type { SqlDialect } from './dialect';
import type { DecisionRow, Models, ReviewRow } from './models';
import { isoTime } from './time';
import { reviewPartsSql, reviewsWhere } from './scope';
import { transactionOf, withoutEndpoints } from './unit-of-work';
import { ACTIVE_ENDPOINT_EXISTS } from './webhook-store';
import type { DecisionOutcome, DueReview, IdempotencyClaim, NewReview, ReviewRepository } from '../domain/reviews/ports';
import type { Scope } from '../domain/shared/principal';
import type { Tx } from '../domain/shared/unit-of-work';
import { type DecisionInput, type DecisionRecord, IDEMPOTENCY_KEY_LIFETIME_MS, type ReviewFilters, type ReviewOrder, type ReviewRecord, reviewLinks, STATUS_AFTER } from '../domain/reviews/records';
import { ClaimTaken } from '../domain/reviews/submitting';
import type { Clock } from '../domain/shared/unit-of-work';
import { latestWaitSql, liveWaitsSql } from './wait-store';

export function toDecisionRecord(row: DecisionRow): DecisionRecord {
  return {
    id: row.id,
    review_id: row.review_id,
    decision_type: row.decision_type,
    reviewer_id: row.reviewer_id,
    reviewer_name: row.reviewer_name,
    modified_action: row.modified_action,
    notes: row.notes,
    created_at: isoTime(row.created_at),
    receipt: row.receipt ?? null,
  };
}

/** `waitingUntil`: the latest live wait on it (`review_waits`); a decided review has none, whatever is left. */
function toReviewRecord(row: ReviewRow, decision: DecisionRow | null, dashboardUrl: string | null, waitingUntil: number | null): ReviewRecord {
  const links = reviewLinks(dashboardUrl, row.id);
  return {
    id: row.id,
    task_type: row.task_type,
    proposed_action: row.proposed_action,
    agent_reasoning: row.agent_reasoning,
    confidence_score: row.confidence_score,
    urgency: row.urgency,
    framework: row.framework,
    metadata: JSON.parse(row.metadata) as ReviewRecord['metadata'],
    organization_id: row.organization_id,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    status: row.status,
    assigned_to: row.assigned_to,
    assigned_team: row.assigned_team,
    routing_rule: row.routing_rule,
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
    decided_at: row.decided_at === null ? null : isoTime(row.decided_at),
    expires_at: row.expires_at === null ? null : isoTime(row.expires_at),
    waiting_until: waitingUntil === null || row.status !== 'pending' ? null : isoTime(waitingUntil),
    decision: decision ? toDecisionRecord(decision) : null,
    ...(links && { links }),
  };
}

const REVIEW_COLUMNS = [
  'organization_id', 'agent_id', 'agent_name', 'task_type', 'proposed_action', 'agent_reasoning', 'confidence_score', 'urgency', 'framework',
  'metadata', 'status', 'assigned_to', 'assigned_team', 'routing_rule', 'created_at', 'updated_at', 'decided_at', 'expires_at',
] as const satisfies ReadonlyArray<keyof ReviewRow>;

const INSERT_REVIEW = `INSERT INTO reviews (${REVIEW_COLUMNS.join(', ')}) VALUES (${REVIEW_COLUMNS.map((c) => `$${c}`).join(', ')})`;

/**
 * A review filed by a registered agent, under the agent's name as the organization has it now,
 * read in the statement that stores the review (a round trip fewer than reading it first): no
 * such agent, no name, and the caller undoes the transaction.
 */
const INSERT_BY_REGISTERED_AGENT = `INSERT INTO reviews (${REVIEW_COLUMNS.join(', ')}) VALUES (${REVIEW_COLUMNS.map((c) =>
  c === 'agent_name' ? '(SELECT name FROM agents WHERE agents.organization_id = $organization_id AND agents.id = $agent_id)' : `$${c}`,
).join(', ')})`;

/** PostgreSQL: a review stored with the id reserved for it, its parameters named apart from the outbox's whose statement it joins (`CombinedWrites`). */
const RESERVED_REVIEW_PARAMETERS = REVIEW_COLUMNS.map((column) => `review_${column}`);
const INSERT_RESERVED_REVIEW = `INSERT INTO reviews (id, ${REVIEW_COLUMNS.join(', ')}) VALUES ($review_id, ${RESERVED_REVIEW_PARAMETERS.map((name) => `$${name}`).join(', ')})`;
const RESERVE_ID = "SELECT nextval(pg_get_serial_sequence('reviews', 'id')) AS id";
const AGENT_NAME = '(SELECT name FROM agents WHERE agents.organization_id = $organization_id AND agents.id = $agent_id) AS agent_name';
/**
 * The id; a registered agent's name as its organization has it now (no such agent, no name);
 * where endpoints belong to organizations, whether the review's has an active one. By
 * `[registered agent][endpoints asked]`.
 */
const RESERVATIONS = [
  [RESERVE_ID, `${RESERVE_ID}, ${ACTIVE_ENDPOINT_EXISTS} AS endpoints`],
  [`${RESERVE_ID}, ${AGENT_NAME}`, `${RESERVE_ID}, ${AGENT_NAME}, ${ACTIVE_ENDPOINT_EXISTS} AS endpoints`],
] as const;

function reservedReviewBind(id: number, row: Omit<ReviewRow, 'id'>): Record<string, unknown> {
  const bind: Record<string, unknown> = { review_id: id };
  REVIEW_COLUMNS.forEach((column, i) => (bind[RESERVED_REVIEW_PARAMETERS[i]] = row[column]));
  return bind;
}

type ReviewWithDecision = ReviewRow & { decision: DecisionRow | null };

/** Persistence of reviews and decisions. Writes run in the transaction of a unit of work. */
export class ReviewStore implements ReviewRepository {
  /** `dashboardUrl`: the dashboard as people reach it, for each record's `links`; null where it is not known. */
  constructor(
    private readonly db: Database,
    private readonly models: Models,
    private readonly dashboardUrl: string | null = null,
    /** Whether a wait's `until` has passed. */
    private readonly clock: Clock = Date.now,
    /** Webhook endpoints belong to organizations (the hosted edition): a create asks whether its organization has one. */
    private readonly endpointsPerOrganization = false,
  ) {}

  private record(row: ReviewRow, decision: DecisionRow | null, waitingUntil: number | null = null): ReviewRecord {
    return toReviewRecord(row, decision, this.dashboardUrl, waitingUntil);
  }

  /** Stores a new review as the policy placed it, and a rule's decision with it. */
  async insert(tx: Tx, review: NewReview, claim?: IdempotencyClaim): Promise<ReviewRecord | null> {
    const transaction = transactionOf(tx);
    const { autoDecision, metadata, registeredAgent, ...fields } = review;
    const row: Omit<ReviewRow, 'id'> = {
      ...fields,
      metadata: JSON.stringify(metadata),
      status: autoDecision ? STATUS_AFTER[autoDecision.decision_type] : 'pending',
      updated_at: review.created_at,
      decided_at: autoDecision ? review.created_at : null,
    };
    const combined = this.db.combined;
    if (combined && !claim && !autoDecision) return this.insertWithNextStatement(combined, transaction, row, registeredAgent);
    // The hot path of every create: one plain INSERT, not a model instance built, validated and read back.
    let id: number;
    if (registeredAgent) {
      const [stored] = await this.db.insertReturning<{ id: number; agent_name: string | null }>(INSERT_BY_REGISTERED_AGENT, 'id, agent_name', row, transaction);
      if (stored.agent_name === null) return null;
      id = Number(stored.id);
      row.agent_name = stored.agent_name;
    } else {
      id = await this.db.insertReturningId(INSERT_REVIEW, row, transaction);
    }
    if (claim) await this.recordClaim(claim, id, row.organization_id, review.created_at, transaction);
    if (!autoDecision) return this.record({ id, ...row }, null);
    const decision = await this.models.Decision.create(
      { review_id: id, organization_id: row.organization_id, reviewer_id: null, modified_action: null, created_at: review.created_at, receipt: null, ...autoDecision },
      { transaction },
    );
    return this.record({ id, ...row }, decision.get({ plain: true }));
  }

  /**
   * PostgreSQL's plain create: its id reserved (and a registered agent's name read) on the
   * transaction's connection before it begins, the insert held back to go with the
   * transaction's next statement, which for a create is its last, the outbox's: the create takes
   * two round trips rather than four. The same read tells whether the organization has an
   * active webhook endpoint; where it has none, the outbox's statement looks none up (a tenth of
   * a hosted create's cost). A rename or removal of the agent, or an endpoint made active, that
   * commits between that read and the create's commit is not seen, as if it had come just after
   * the create; one that committed before the create was asked for always is.
   */
  private async insertWithNextStatement(combined: CombinedWrites, transaction: Transaction, row: Omit<ReviewRow, 'id'>, registeredAgent: boolean): Promise<ReviewRecord | null> {
    const askEndpoints = this.endpointsPerOrganization && row.organization_id !== null;
    const [reserved] = await combined.readAhead<{ id: number; agent_name?: string | null; endpoints?: boolean }>(
      RESERVATIONS[registeredAgent ? 1 : 0][askEndpoints ? 1 : 0],
      registeredAgent || askEndpoints ? { organization_id: row.organization_id, ...(registeredAgent ? { agent_id: row.agent_id } : {}) } : {},
      transaction,
    );
    if (askEndpoints && reserved.endpoints === false) withoutEndpoints(transaction, row.organization_id as number);
    if (registeredAgent) {
      if (reserved.agent_name === null || reserved.agent_name === undefined) return null;
      row.agent_name = reserved.agent_name;
    }
    const id = Number(reserved.id);
    await combined.carry(transaction, { sql: INSERT_RESERVED_REVIEW, bind: reservedReviewBind(id, row) });
    return this.record({ id, ...row }, null);
  }

  /**
   * Stores the key with the review it made. Expired keys go first — all of them, through the
   * index on their age — so a key reused after its lifetime starts afresh. A key another
   * process stored a moment ago is reported as `ClaimTaken`.
   */
  private async recordClaim(claim: IdempotencyClaim, reviewId: number, organizationId: number | null, now: number, transaction: Transaction): Promise<void> {
    await this.db.sequelize.query('DELETE FROM idempotency_keys WHERE created_at < $expired', {
      bind: { expired: now - IDEMPOTENCY_KEY_LIFETIME_MS },
      transaction,
    });
    try {
      await this.db.sequelize.query(
        'INSERT INTO idempotency_keys (organization_id, scope, key, request_hash, review_id, created_at) VALUES ($organizationId, $caller, $key, $requestHash, $reviewId, $now)',
        { bind: { organizationId, ...claim, reviewId, now }, type: QueryTypes.INSERT, transaction },
      );
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new ClaimTaken();
      throw error;
    }
  }

  async findClaim(scope: Scope, caller: string, key: string, now: number): Promise<{ reviewId: number; requestHash: string } | null> {
    const scoped = reviewPartsSql(scope);
    const [row] = await this.db.sequelize.query<{ review_id: number; request_hash: string }>(
      `SELECT review_id, request_hash FROM idempotency_keys WHERE scope = $caller AND key = $key AND created_at >= $expired${scoped.sql}`,
      { bind: { caller, key, expired: now - IDEMPOTENCY_KEY_LIFETIME_MS, ...scoped.bind }, type: QueryTypes.SELECT },
    );
    return row ? { reviewId: row.review_id, requestHash: row.request_hash } : null;
  }

  async leastBusy(tx: Tx, scope: Scope, candidates: readonly string[]): Promise<string | null> {
    if (candidates.length <= 1) return candidates[0] ?? null;
    const rows = await this.db.sequelize.query<{ assigned_to: string; pending: number }>(
      `SELECT assigned_to, COUNT(*) AS pending FROM reviews WHERE status = 'pending' AND assigned_to IN (:candidates)${
        scope.organizationId === null ? '' : ' AND organization_id = :organizationId'
      } GROUP BY assigned_to`,
      { replacements: { candidates, organizationId: scope.organizationId }, type: QueryTypes.SELECT, transaction: transactionOf(tx) },
    );
    const load = new Map(rows.map((row) => [row.assigned_to, Number(row.pending)]));
    return candidates.reduce((best, candidate) => ((load.get(candidate) ?? 0) < (load.get(best) ?? 0) ? candidate : best));
  }

  /** The earliest expiry among pending reviews (read through the partial index `reviews_expiry`). */
  async nextExpiry(): Promise<number | null> {
    const [row] = await this.db.sequelize.query<{ next: number | null }>(
      "SELECT MIN(expires_at) AS next FROM reviews WHERE status = 'pending' AND expires_at IS NOT NULL",
      { type: QueryTypes.SELECT },
    );
    return row?.next === null || row?.next === undefined ? null : Number(row.next);
  }

  /** Pending reviews whose time is up, oldest expiry first. */
  async dueForExpiry(now: number, limit: number): Promise<DueReview[]> {
    const rows = await this.db.sequelize.query<DueReview>(
      "SELECT id, organization_id, urgency, created_at, expires_at FROM reviews WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= :now ORDER BY expires_at LIMIT :limit",
      { replacements: { now, limit }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({ ...row, created_at: Number(row.created_at), expires_at: Number(row.expires_at) }));
  }

  async findById(scope: Scope, id: number, tx?: Tx): Promise<ReviewRecord | null> {
    return this.findIn(scope, id, tx ? transactionOf(tx) : undefined);
  }

  private async findIn(scope: Scope, id: number, transaction?: Transaction): Promise<ReviewRecord | null> {
    const row = (await this.models.Review.findOne({
      where: { id, ...reviewsWhere(scope) },
      include: [{ model: this.models.Decision, as: 'decision' }],
      raw: true,
      nest: true,
      transaction,
    })) as unknown as ReviewWithDecision | null;
    if (!row) return null;
    const waits = await this.latestWaits([row], transaction);
    return this.record(row, decisionOrNull(row.decision), waits.get(row.id) ?? null);
  }

  /** The latest live wait on each pending review of `rows` that has one: one grouped query for a page. */
  private async latestWaits(rows: readonly ReviewRow[], transaction?: Transaction): Promise<Map<number, number>> {
    const pending = rows.filter((row) => row.status === 'pending').map((row) => row.id);
    if (pending.length === 0) return new Map();
    const found = await this.db.sequelize.query<{ review_id: number; latest: string | number }>(
      `SELECT review_id, MAX(until) AS latest FROM (${liveWaitsSql(this.clock())}) live WHERE review_id IN (:pending) GROUP BY review_id`,
      { replacements: { pending }, type: QueryTypes.SELECT, transaction },
    );
    return new Map(found.map((row) => [Number(row.review_id), Number(row.latest)]));
  }

  /**
   * One page of reviews. At a million rows, walking OFFSET rows through the table and the
   * decision join cost tens of milliseconds; the page's ids come from an index alone, and only
   * those rows are read in full. Counting reads the tallies (migration 0006) when every
   * filter is one they keep.
   */
  async list(
    scope: Scope,
    filters: Omit<ReviewFilters, 'organization_id'>,
    page: number,
    pageSize: number,
    order: ReviewOrder = 'newest',
  ): Promise<{ reviews: ReviewRecord[]; total: number }> {
    // The scope's conditions beside the filters', not over them: a bound key's filter on another agent finds nothing.
    const inScope = reviewsWhere(scope);
    // One moment for the filter, the order and the page's values, so they agree.
    const now = this.clock();
    const where = whereOf(filters, inScope, this.db.sql, (value) => this.db.sequelize.escape(value), now);
    const sort = ordersFor(this.db.sql, now)[order];
    const [total, ids] = await Promise.all([
      this.count({ ...filters, ...inScope }, where),
      this.models.Review.findAll({ attributes: ['id'], where, order: sort, limit: pageSize, offset: (page - 1) * pageSize, raw: true }) as unknown as Promise<
        Array<Pick<ReviewRow, 'id'>>
      >,
    ]);
    if (ids.length === 0) return { total, reviews: [] };
    const rows = (await this.models.Review.findAll({
      where: { id: ids.map((row) => row.id) },
      include: [{ model: this.models.Decision, as: 'decision' }],
      order: sort,
      raw: true,
      nest: true,
    })) as unknown as ReviewWithDecision[];
    const waits = await this.latestWaits(rows);
    return { total, reviews: rows.map((row) => this.record(row, decisionOrNull(row.decision), waits.get(row.id) ?? null)) };
  }

  private async count(filters: ReviewFilters, where: WhereOptions<ReviewRow>): Promise<number> {
    const used = Object.entries(filters).filter(([, value]) => value !== undefined);
    if (!used.every(([name]) => TALLIED_FILTERS.has(name))) return this.models.Review.count({ where });
    const conditions = used.map(([name, value]) => (name === 'decided' ? `status ${value ? '<>' : '='} 'pending'` : `${name} = :${name}`));
    const [row] = await this.db.sequelize.query<{ total: number | null }>(
      `SELECT SUM(reviews) AS total FROM review_tallies WHERE ${['1 = 1', ...conditions].join(' AND ')}`,
      { type: QueryTypes.SELECT, replacements: Object.fromEntries(used) },
    );
    return Number(row.total ?? 0);
  }

  async exists(scope: Scope, id: number): Promise<boolean> {
    return (await this.models.Review.count({ where: { id, ...reviewsWhere(scope) } })) > 0;
  }

  /**
   * Records the decision and moves the review out of `pending` in the transaction. The
   * conditional update is what makes racing deciders safe: only the first sees a pending row.
   */
  async recordDecision(tx: Tx, scope: Scope, reviewId: number, input: DecisionInput, now: number): Promise<DecisionOutcome> {
    const transaction = transactionOf(tx);
    const [changed] = await this.models.Review.update(
      { status: STATUS_AFTER[input.decision_type], decided_at: now, updated_at: now },
      { where: { id: reviewId, status: 'pending', ...reviewsWhere(scope) }, transaction },
    );
    if (changed === 0) {
      const existing = await this.findIn(scope, reviewId, transaction);
      return existing ? { outcome: 'already_decided', review: existing } : { outcome: 'not_found' };
    }
    const review = (await this.models.Review.findByPk(reviewId, { raw: true, transaction })) as unknown as ReviewRow;
    const decision = await this.models.Decision.create(
      {
        review_id: reviewId,
        organization_id: review.organization_id,
        decision_type: input.decision_type,
        reviewer_id: input.reviewer_id ?? null,
        reviewer_name: input.reviewer_name ?? null,
        modified_action: input.decision_type === 'modify' ? (input.modified_action ?? null) : null,
        notes: input.notes ?? null,
        created_at: now,
        receipt: null,
      },
      { transaction },
    );
    return { outcome: 'recorded', review: this.record(review, decision.get({ plain: true })) };
  }

  async attachReceipt(tx: Tx, decisionId: number, receipt: string): Promise<void> {
    await this.db.sequelize.query('UPDATE decisions SET receipt = $receipt WHERE id = $decisionId', { bind: { receipt, decisionId }, transaction: transactionOf(tx) });
  }
}

/** The filters that are columns of `review_tallies`, so a count of them needs no scan of the reviews. */
const TALLIED_FILTERS: ReadonlySet<string> = new Set(['status', 'decided', 'task_type', 'urgency', 'framework', 'organization_id']);

function ordersFor(sql: SqlDialect, now: number): Record<ReviewOrder, Order> {
  const priority: Order = [
    [literal(URGENCY_RANK_SQL), 'ASC'],
    ['id', 'ASC'],
  ];
  return {
    newest: [['id', 'DESC']],
    oldest: [['id', 'ASC']],
    priority,
    // Soonest give-up first; reviews nobody waits on after them (`IS NULL` ascending puts false before true on both databases).
    waiting_until: [[literal(`${latestWaitSql(now)} IS NULL`), 'ASC'], [literal(latestWaitSql(now)), 'ASC'], ...priority],
    // Undecided reviews last: SQLite sorts NULL below every value, so a descending walk ends
    // with them; PostgreSQL sorts it above, unless told.
    recently_decided: [
      ['decided_at', sql.descendingNullsLast],
      ['id', 'DESC'],
    ],
  };
}

/** `%` and `_` in a search are literal characters, not wildcards. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function whereOf(filters: ReviewFilters, inScope: ReturnType<typeof reviewsWhere>, sql: SqlDialect, escape: (value: string) => string, now: number): WhereOptions<ReviewRow> {
  const { decided, q, waiting, assigned_to_any: assignedToAny, ...equalities } = filters;
  const conditions: unknown[] = [equalities, inScope];
  const waitedOn = `(status = 'pending' AND id IN (SELECT review_id FROM (${liveWaitsSql(now)}) live))`;
  if (waiting !== undefined) conditions.push(literal(waiting ? waitedOn : `NOT ${waitedOn}`));
  if (assignedToAny) conditions.push({ [Op.or]: [{ assigned_to: assignedToAny.people }, { assigned_team: assignedToAny.teams }] });
  if (decided !== undefined) conditions.push({ status: decided ? { [Op.ne]: 'pending' } : 'pending' });
  // Case-insensitive for ASCII letters on both: SQLite's LIKE is, PostgreSQL's ILIKE.
  if (q) conditions.push(literal(`proposed_action ${sql.caseInsensitiveLike} ${escape(likePattern(q))} ESCAPE '\\'`));
  return { [Op.and]: conditions } as WhereOptions<ReviewRow>;
}

/** A LEFT JOIN with `nest: true` yields an object of nulls when there is no decision. */
function decisionOrNull(decision: DecisionRow | null | undefined): DecisionRow | null {
  return decision && decision.id !== null ? decision : null;
}
