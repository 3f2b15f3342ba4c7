import { QueryTypes } from 'sequelize';
import type { Database } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { Tx } from '../domain/shared/unit-of-work';
import type { EvalFields, EvalFilters, EvalRecord, EvalRunRecord, RunStatus, Schedule } from '../domain/evaluations/records';
import type { EvalRepository, EvaluationQueries, ModifiedPair, PopulationFilter, PopulationGroup, ReviewClass, ScoreGroup, VotedReview } from '../domain/evaluations/ports';

interface EvalRow {
  id: number;
  organization_id: number;
  name: string;
  filters: string;
  target_precision: number;
  confidence: number;
  grid: string;
  min_samples: number;
  schedule: Schedule | null;
  next_run_at: number | null;
  created_at: number;
  updated_at: number;
}

interface RunRow {
  id: number;
  eval_id: number;
  status: RunStatus;
  triggered_by: 'manual' | 'schedule';
  started_at: number;
  finished_at: number | null;
  result: string | null;
  error: string | null;
}

const COLUMNS = 'id, organization_id, name, filters, target_precision, confidence, grid, min_samples, schedule, next_run_at, created_at, updated_at';
const RUN_COLUMNS = 'id, eval_id, status, triggered_by, started_at, finished_at, result, error';

function toEval(row: EvalRow): EvalRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    name: row.name,
    filters: JSON.parse(row.filters) as EvalFilters,
    target_precision: Number(row.target_precision),
    confidence: Number(row.confidence),
    grid: JSON.parse(row.grid) as number[],
    min_samples: Number(row.min_samples),
    schedule: row.schedule,
    next_run_at: row.next_run_at === null ? null : isoTime(Number(row.next_run_at)),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

function toRun(row: RunRow): EvalRunRecord {
  return {
    id: Number(row.id),
    eval_id: Number(row.eval_id),
    status: row.status,
    triggered_by: row.triggered_by,
    started_at: isoTime(Number(row.started_at)),
    finished_at: row.finished_at === null ? null : isoTime(Number(row.finished_at)),
    result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
    error: row.error,
  };
}

function written(fields: EvalFields, nextRunAt: number | null): Record<string, unknown> {
  return { ...fields, filters: JSON.stringify(fields.filters), grid: JSON.stringify(fields.grid), next_run_at: nextRunAt };
}

/**
 * How a review left the queue. Expiry and automatic rules decide under names no person has
 * (server/domain/reviews/expiry.ts, submitting.ts); everything else not pending a person decided.
 */
const CLASS = `CASE WHEN r.status = 'pending' THEN 'pending'
  WHEN d.reviewer_name = 'policy:expired' THEN 'expired'
  WHEN d.reviewer_name LIKE 'rule:%' THEN 'auto_decided'
  ELSE 'decided' END`;
/** An audit-sample review stands for 1 / rate reviews the rule decided without a person. */
const WEIGHT = `CASE WHEN m.kind = 'audit_sample' AND m.sample_rate > 0 THEN 1.0 / m.sample_rate ELSE 1.0 END`;
const APPROVED = `CASE WHEN r.status = 'approved' THEN 1.0 ELSE 0.0 END`;
const FROM = `FROM reviews r LEFT JOIN decisions d ON d.review_id = r.id LEFT JOIN review_rule_marks m ON m.review_id = r.id`;

/** The suite's filters as a WHERE clause with its bound values (lists spelled out one parameter each). */
function where(filter: PopulationFilter): { sql: string; bind: Record<string, unknown> } {
  const clauses = ['r.organization_id = $organizationId'];
  const bind: Record<string, unknown> = { organizationId: filter.organizationId };
  for (const field of ['task_type', 'framework', 'agent_id'] as const) {
    const values = filter[field];
    if (!values || values.length === 0) continue;
    const names = values.map((value, index) => {
      bind[`${field}_${index}`] = value;
      return `$${field}_${index}`;
    });
    clauses.push(`r.${field} IN (${names.join(', ')})`);
  }
  if (filter.since !== undefined) {
    clauses.push('r.created_at >= $since');
    bind.since = filter.since;
  }
  if (filter.until !== undefined) {
    clauses.push('r.created_at < $until');
    bind.until = filter.until;
  }
  return { sql: clauses.join(' AND '), bind };
}

export class EvaluationStore implements EvalRepository, EvaluationQueries {
  constructor(private readonly db: Database) {}

  async insert(tx: Tx, organizationId: number, fields: EvalFields, nextRunAt: number | null, now: number): Promise<EvalRecord> {
    const row = { ...written(fields, nextRunAt), organization_id: organizationId, created_at: now, updated_at: now };
    const id = await this.db.insertReturningId(
      `INSERT INTO evals (organization_id, name, filters, target_precision, confidence, grid, min_samples, schedule, next_run_at, created_at, updated_at)
       VALUES ($organization_id, $name, $filters, $target_precision, $confidence, $grid, $min_samples, $schedule, $next_run_at, $created_at, $updated_at)`,
      row,
      transactionOf(tx),
    );
    return toEval({ id, ...row } as unknown as EvalRow);
  }

  async list(organizationId: number): Promise<EvalRecord[]> {
    return (await organizationRows<EvalRow>(this.db, 'evals', COLUMNS, organizationId)).map(toEval);
  }

  async find(organizationId: number, id: number, tx?: Tx): Promise<EvalRecord | null> {
    const [row] = await organizationRows<EvalRow>(this.db, 'evals', COLUMNS, organizationId, id, tx);
    return row ? toEval(row) : null;
  }

  async update(tx: Tx, organizationId: number, id: number, fields: EvalFields, nextRunAt: number | null, now: number): Promise<EvalRecord> {
    await this.db.sequelize.query(
      `UPDATE evals SET name = $name, filters = $filters, target_precision = $target_precision, confidence = $confidence, grid = $grid,
       min_samples = $min_samples, schedule = $schedule, next_run_at = $next_run_at, updated_at = $now WHERE id = $id AND organization_id = $organizationId`,
      { bind: { ...written(fields, nextRunAt), id, organizationId, now }, transaction: transactionOf(tx) },
    );
    return (await this.find(organizationId, id, tx))!;
  }

  async delete(tx: Tx, organizationId: number, id: number): Promise<boolean> {
    if (!(await this.find(organizationId, id, tx))) return false;
    const transaction = transactionOf(tx);
    await this.db.sequelize.query('DELETE FROM eval_runs WHERE eval_id = $id', { bind: { id }, transaction });
    await this.db.sequelize.query('DELETE FROM evals WHERE id = $id', { bind: { id }, transaction });
    return true;
  }

  async insertRun(tx: Tx, organizationId: number, evalId: number, triggeredBy: EvalRunRecord['triggered_by'], now: number): Promise<EvalRunRecord> {
    const row = { eval_id: evalId, organization_id: organizationId, status: 'running' as const, triggered_by: triggeredBy, started_at: now };
    const id = await this.db.insertReturningId(
      `INSERT INTO eval_runs (eval_id, organization_id, status, triggered_by, started_at) VALUES ($eval_id, $organization_id, $status, $triggered_by, $started_at)`,
      row,
      transactionOf(tx),
    );
    return toRun({ id, ...row, finished_at: null, result: null, error: null });
  }

  async finishRun(tx: Tx, runId: number, status: Exclude<RunStatus, 'running'>, result: Record<string, unknown> | null, error: string | null, now: number): Promise<EvalRunRecord> {
    const transaction = transactionOf(tx);
    await this.db.sequelize.query('UPDATE eval_runs SET status = $status, result = $result, error = $error, finished_at = $now WHERE id = $runId', {
      bind: { status, result: result === null ? null : JSON.stringify(result), error, now, runId },
      transaction,
    });
    const [row] = await this.db.sequelize.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM eval_runs WHERE id = $runId`, { bind: { runId }, type: QueryTypes.SELECT, transaction });
    return toRun(row);
  }

  async listRuns(organizationId: number, evalId: number, limit: number, before?: number): Promise<EvalRunRecord[]> {
    const rows = await this.db.sequelize.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM eval_runs WHERE organization_id = $organizationId AND eval_id = $evalId${before === undefined ? '' : ' AND id < $before'} ORDER BY id DESC LIMIT $limit`,
      { bind: before === undefined ? { organizationId, evalId, limit } : { organizationId, evalId, limit, before }, type: QueryTypes.SELECT },
    );
    return rows.map(toRun);
  }

  async findRun(organizationId: number, evalId: number, runId: number): Promise<EvalRunRecord | null> {
    const [row] = await this.db.sequelize.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM eval_runs WHERE organization_id = $organizationId AND eval_id = $evalId AND id = $runId`, {
      bind: { organizationId, evalId, runId },
      type: QueryTypes.SELECT,
    });
    return row ? toRun(row) : null;
  }

  async claimDue(tx: Tx, now: number): Promise<EvalRecord | null> {
    const [row] = await this.db.sequelize.query<EvalRow>(
      `SELECT ${COLUMNS} FROM evals WHERE schedule IS NOT NULL AND next_run_at <= $now ORDER BY next_run_at, id LIMIT 1 ${this.db.sql.skipLocked}`,
      { bind: { now }, type: QueryTypes.SELECT, transaction: transactionOf(tx) },
    );
    return row ? toEval(row) : null;
  }

  async setNextRun(tx: Tx, id: number, nextRunAt: number): Promise<void> {
    await this.db.sequelize.query('UPDATE evals SET next_run_at = $nextRunAt WHERE id = $id', { bind: { id, nextRunAt }, transaction: transactionOf(tx) });
  }

  async population(filter: PopulationFilter): Promise<PopulationGroup[]> {
    const { sql, bind } = where(filter);
    const rows = await this.db.sequelize.query<{ task_type: string; agent_id: number | null; status: string; class: ReviewClass; count: number; weight: number; with_confidence: number }>(
      `SELECT task_type, agent_id, status, class, COUNT(*) AS count, SUM(weight) AS weight, SUM(has_confidence) AS with_confidence
       FROM (SELECT r.task_type, r.agent_id, r.status, ${CLASS} AS class, ${WEIGHT} AS weight,
                    CASE WHEN r.confidence_score IS NULL THEN 0 ELSE 1 END AS has_confidence
             ${FROM} WHERE ${sql}) reviewed
       GROUP BY task_type, agent_id, status, class`,
      { bind, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({
      task_type: row.task_type,
      agent_id: row.agent_id === null ? null : Number(row.agent_id),
      status: row.status,
      class: row.class,
      count: Number(row.count),
      weight: Number(row.weight),
      with_confidence: Number(row.with_confidence),
    }));
  }

  async scores(filter: PopulationFilter): Promise<ScoreGroup[]> {
    const { sql, bind } = where(filter);
    // Thousandths, rounded down: SQLite's CAST truncates (confidences are never negative); PostgreSQL's would round.
    const score = this.db.sql.name === 'postgres' ? 'FLOOR(r.confidence_score * 1000)' : 'CAST(r.confidence_score * 1000 AS INTEGER)';
    const rows = await this.db.sequelize.query<Record<keyof ScoreGroup, number | string>>(
      `SELECT score, SUM(w) AS count, SUM(w * y) AS sum_approved, SUM(w * c) AS sum_confidence, SUM(w * c * c) AS sum_confidence_squared, SUM(w * c * y) AS sum_confidence_approved
       FROM (SELECT ${score} AS score, r.confidence_score AS c, ${WEIGHT} AS w, ${APPROVED} AS y
             ${FROM} WHERE ${sql} AND r.confidence_score IS NOT NULL AND ${CLASS} = 'decided') scored
       GROUP BY score`,
      { bind, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({
      score: Number(row.score),
      count: Number(row.count),
      sum_approved: Number(row.sum_approved),
      sum_confidence: Number(row.sum_confidence),
      sum_confidence_squared: Number(row.sum_confidence_squared),
      sum_confidence_approved: Number(row.sum_confidence_approved),
    }));
  }

  async durationsAtRanks(filter: PopulationFilter, ranks: readonly number[]): Promise<Map<number, number>> {
    const { sql, bind } = where(filter);
    const wanted = ranks.map((rank, index) => {
      bind[`rank_${index}`] = rank;
      return `$rank_${index}`;
    });
    const rows = await this.db.sequelize.query<{ place: number; waited: number }>(
      `SELECT place, waited FROM (
         SELECT (r.decided_at - r.created_at) AS waited, ROW_NUMBER() OVER (ORDER BY r.decided_at - r.created_at) AS place
         ${FROM} WHERE ${sql} AND ${CLASS} = 'decided') ranked
       WHERE place IN (${wanted.join(', ')})`,
      { bind, type: QueryTypes.SELECT },
    );
    return new Map(rows.map((row) => [Number(row.place), Number(row.waited) / 1000]));
  }

  async recentVotes(filter: PopulationFilter, limit: number): Promise<VotedReview[]> {
    const { sql, bind } = where(filter);
    const rows = await this.db.sequelize.query<{ state: string }>(
      `SELECT w.state ${FROM} JOIN review_workflows w ON w.review_id = r.id WHERE ${sql} AND ${CLASS} = 'decided' ORDER BY r.id DESC LIMIT $limit`,
      { bind: { ...bind, limit }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ((JSON.parse(row.state) as { votes?: VotedReview }).votes ?? []).map((vote) => ({ decision_type: vote.decision_type })));
  }

  async recentModifications(filter: PopulationFilter, limit: number): Promise<ModifiedPair[]> {
    const { sql, bind } = where(filter);
    const rows = await this.db.sequelize.query<{ proposed: string; approved: string | null }>(
      `SELECT r.proposed_action AS proposed, d.modified_action AS approved ${FROM}
       WHERE ${sql} AND r.status = 'modified' AND ${CLASS} = 'decided' ORDER BY r.id DESC LIMIT $limit`,
      { bind: { ...bind, limit }, type: QueryTypes.SELECT },
    );
    return rows.filter((row) => row.approved !== null).map((row) => ({ proposed: row.proposed, approved: row.approved! }));
  }
}
