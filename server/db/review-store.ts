import { literal, Op, type Order, QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import { URGENCY_RANK_SQL } from './migrations/0004-queue-order';
import type { Database } from './connection';
import type { DecisionRow, Models, ReviewRow } from './models';
import { isoTime } from './time';
import type { Routing } from '../domain/policy';
import {
  type DecisionInput,
  type DecisionRecord,
  type ReviewFilters,
  type ReviewInput,
  type ReviewOrder,
  type ReviewRecord,
  STATUS_AFTER,
} from '../domain/records';

export type DecisionOutcome =
  | { outcome: 'recorded'; review: ReviewRecord }
  | { outcome: 'not_found' }
  | { outcome: 'already_decided'; review: ReviewRecord };

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
  };
}

export function toReviewRecord(row: ReviewRow, decision: DecisionRow | null): ReviewRecord {
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
    status: row.status,
    assigned_to: row.assigned_to,
    assigned_team: row.assigned_team,
    routing_rule: row.routing_rule,
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
    decided_at: row.decided_at === null ? null : isoTime(row.decided_at),
    expires_at: row.expires_at === null ? null : isoTime(row.expires_at),
    decision: decision ? toDecisionRecord(decision) : null,
  };
}

type ReviewWithDecision = ReviewRow & { decision: DecisionRow | null };

/** Persistence of reviews and decisions. Every write goes through `Database.write`. */
export class ReviewStore {
  constructor(
    private readonly db: Database,
    private readonly models: Models,
  ) {}

  /**
   * Stores a new review as the policy placed it, in one transaction: assigned (to the rule's
   * reviewer, or the least busy default reviewer), or already decided by a rule.
   */
  async insert(input: ReviewInput, now: number, placement: { routing: Routing; expiresAt: number | null }): Promise<ReviewRecord> {
    const { routing } = placement;
    return this.db.write(async (transaction) => {
      const assignedTo = routing.assignTo ?? (await this.leastBusy(routing.candidates, transaction));
      const created = await this.models.Review.create(
        {
          organization_id: input.organization_id ?? null,
          agent_id: input.agent_id ?? null,
          task_type: input.task_type,
          proposed_action: input.proposed_action,
          agent_reasoning: input.agent_reasoning ?? null,
          confidence_score: input.confidence_score ?? null,
          urgency: input.urgency ?? 'medium',
          framework: input.framework ?? null,
          metadata: JSON.stringify(input.metadata ?? {}),
          status: routing.autoDecide ? STATUS_AFTER[routing.autoDecide] : 'pending',
          assigned_to: assignedTo,
          assigned_team: routing.team,
          routing_rule: routing.rule,
          created_at: now,
          updated_at: now,
          decided_at: routing.autoDecide ? now : null,
          expires_at: routing.autoDecide ? null : placement.expiresAt,
        },
        { transaction },
      );
      const row = created.get({ plain: true });
      if (!routing.autoDecide) return toReviewRecord(row, null);
      const decision = await this.models.Decision.create(
        {
          review_id: row.id,
          organization_id: row.organization_id,
          decision_type: routing.autoDecide,
          reviewer_id: null,
          reviewer_name: `rule:${routing.rule}`,
          modified_action: null,
          notes: `Decided automatically by the routing rule '${routing.rule}'.`,
          created_at: now,
        },
        { transaction },
      );
      return toReviewRecord(row, decision.get({ plain: true }));
    });
  }

  /** The reviewer among `candidates` with the fewest pending reviews; ties go to the first listed. */
  private async leastBusy(candidates: readonly string[], transaction: Transaction): Promise<string | null> {
    if (candidates.length <= 1) return candidates[0] ?? null;
    const rows = await this.db.sequelize.query<{ assigned_to: string; pending: number }>(
      "SELECT assigned_to, COUNT(*) AS pending FROM reviews WHERE status = 'pending' AND assigned_to IN (:candidates) GROUP BY assigned_to",
      { replacements: { candidates }, type: QueryTypes.SELECT, transaction },
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
  async dueForExpiry(now: number, limit: number): Promise<Array<{ id: number; urgency: ReviewRecord['urgency']; created_at: number; expires_at: number }>> {
    const rows = await this.db.sequelize.query<{ id: number; urgency: ReviewRecord['urgency']; created_at: number; expires_at: number }>(
      "SELECT id, urgency, created_at, expires_at FROM reviews WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= :now ORDER BY expires_at LIMIT :limit",
      { replacements: { now, limit }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({ ...row, created_at: Number(row.created_at), expires_at: Number(row.expires_at) }));
  }

  async findById(id: number, transaction?: Transaction): Promise<ReviewRecord | null> {
    const row = (await this.models.Review.findByPk(id, {
      include: [{ model: this.models.Decision, as: 'decision' }],
      raw: true,
      nest: true,
      transaction,
    })) as unknown as ReviewWithDecision | null;
    return row ? toReviewRecord(row, decisionOrNull(row.decision)) : null;
  }

  async list(filters: ReviewFilters, page: number, pageSize: number, order: ReviewOrder = 'newest'): Promise<{ reviews: ReviewRecord[]; total: number }> {
    const where = whereOf(filters, (value) => this.db.sequelize.escape(value));
    const [total, rows] = await Promise.all([
      this.models.Review.count({ where }),
      this.models.Review.findAll({
        where,
        include: [{ model: this.models.Decision, as: 'decision' }],
        order: ORDERS[order],
        limit: pageSize,
        offset: (page - 1) * pageSize,
        raw: true,
        nest: true,
      }) as unknown as Promise<ReviewWithDecision[]>,
    ]);
    return { total, reviews: rows.map((row) => toReviewRecord(row, decisionOrNull(row.decision))) };
  }

  async exists(id: number): Promise<boolean> {
    return (await this.models.Review.count({ where: { id } })) > 0;
  }

  async findDecision(reviewId: number): Promise<DecisionRecord | null> {
    const row = await this.models.Decision.findOne({ where: { review_id: reviewId }, raw: true });
    return row ? toDecisionRecord(row as unknown as DecisionRow) : null;
  }

  /**
   * Records the decision and moves the review out of `pending` in one transaction. The
   * conditional update is what makes racing deciders safe: only the first sees a pending row.
   */
  recordDecision(reviewId: number, input: DecisionInput, now: number): Promise<DecisionOutcome> {
    return this.db.write(async (transaction) => {
      const [changed] = await this.models.Review.update(
        { status: STATUS_AFTER[input.decision_type], decided_at: now, updated_at: now },
        { where: { id: reviewId, status: 'pending' }, transaction },
      );
      if (changed === 0) {
        const existing = await this.findById(reviewId, transaction);
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
        },
        { transaction },
      );
      return { outcome: 'recorded', review: toReviewRecord(review, decision.get({ plain: true })) };
    });
  }
}

const ORDERS: Record<ReviewOrder, Order> = {
  newest: [['id', 'DESC']],
  oldest: [['id', 'ASC']],
  priority: [
    [literal(URGENCY_RANK_SQL), 'ASC'],
    ['id', 'ASC'],
  ],
  // SQLite sorts NULL below every value, so undecided reviews come last in a descending walk.
  recently_decided: [
    ['decided_at', 'DESC'],
    ['id', 'DESC'],
  ],
};

/** `%` and `_` in a search are literal characters, not wildcards. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function whereOf(filters: ReviewFilters, escape: (value: string) => string): WhereOptions<ReviewRow> {
  const { decided, q, ...equalities } = filters;
  const conditions: unknown[] = [equalities];
  if (decided !== undefined) conditions.push({ status: decided ? { [Op.ne]: 'pending' } : 'pending' });
  if (q) conditions.push(literal(`proposed_action LIKE ${escape(likePattern(q))} ESCAPE '\\'`));
  return { [Op.and]: conditions } as WhereOptions<ReviewRow>;
}

/** A LEFT JOIN with `nest: true` yields an object of nulls when there is no decision. */
function decisionOrNull(decision: DecisionRow | null | undefined): DecisionRow | null {
  return decision && decision.id !== null ? decision : null;
}
