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
 * A decision no person made: expiry's and automatic rules' (server/domain/reviews/expiry.ts,
 * submitting.ts). Written as the partial index decisions_by_system is (migration 0023), so that
 * the queries below find these few through it.
 */
const SYSTEM_DECISION = "(d.reviewer_name = 'policy:expired' OR d.reviewer_name LIKE 'rule:%')";
const SYSTEM_CLASS = "CASE WHEN d.reviewer_name = 'policy:expired' THEN 'expired' ELSE 'auto_decided' END";
const APPROVED = `CASE WHEN r.status = 'approved' THEN 1.0 ELSE 0.0 END`;
const HAS_CONFIDENCE = 'CASE WHEN r.confidence_score IS NULL THEN 0 ELSE 1 END';
/**
 * The reviews whose counts are corrected after the count over all of them: those a system
 * decided (taken out), and audit samples people decided (each counts 1 / rate − 1 times more).
 */
const systemDecided = (join: string) => `FROM decisions d ${join} reviews r ON r.id = d.review_id WHERE ${SYSTEM_DECISION}`;
const auditSampled = (join: string) => `FROM review_rule_marks m ${join} reviews r ON r.id = m.review_id LEFT JOIN decisions d ON d.review_id = r.id
  WHERE m.kind = 'audit_sample' AND m.sample_rate > 0 AND r.status <> 'pending' AND NOT (d.reviewer_name IS NOT NULL AND ${SYSTEM_DECISION})`;
const EXTRA_WEIGHT = '(1.0 / m.sample_rate - 1.0)';

type Key = string;
const keyOf = (...parts: unknown[]): Key => JSON.stringify(parts);

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
  /**
   * How the queries that start from a small table (system decisions, audit samples, workflows)
   * join the reviews: SQLite's planner would rather walk every review of the organization and
   * look each one up, unless CROSS JOIN holds it to the order written; PostgreSQL plans by its
   * statistics (and takes no ON after CROSS JOIN).
   */
  private readonly driven: string;

  constructor(private readonly db: Database) {
    this.driven = db.sql.name === 'sqlite' ? 'CROSS JOIN' : 'JOIN';
  }

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

  async failAbandoned(tx: Tx, before: number, error: string, now: number): Promise<number> {
    const transaction = transactionOf(tx);
    const [{ count }] = await this.db.sequelize.query<{ count: number }>("SELECT COUNT(*) AS count FROM eval_runs WHERE status = 'running' AND started_at < $before", {
      bind: { before },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (Number(count) === 0) return 0;
    await this.db.sequelize.query("UPDATE eval_runs SET status = 'failed', error = $error, finished_at = $now WHERE status = 'running' AND started_at < $before", {
      bind: { before, error, now },
      transaction,
    });
    return Number(count);
  }

  async setNextRun(tx: Tx, id: number, nextRunAt: number): Promise<void> {
    await this.db.sequelize.query('UPDATE evals SET next_run_at = $nextRunAt WHERE id = $id', { bind: { id, nextRunAt }, transaction: transactionOf(tx) });
  }

  /**
   * Counted from the index reviews_evaluation alone, then corrected by the few reviews a system
   * decided and the audit samples: three small queries rather than a join per review.
   */
  async population(filter: PopulationFilter): Promise<PopulationGroup[]> {
    const { sql, bind } = where(filter);
    type Row = { task_type: string; agent_id: number | null; status: string; count: number; with_confidence: number; class?: ReviewClass; extra?: number };
    const groupBy = 'GROUP BY r.task_type, r.agent_id, r.status';
    const [all, system, sampled] = await Promise.all([
      this.select<Row>(`SELECT r.task_type, r.agent_id, r.status, COUNT(*) AS count, SUM(${HAS_CONFIDENCE}) AS with_confidence FROM reviews r WHERE ${sql} ${groupBy}`, bind),
      this.select<Row>(
        `SELECT r.task_type, r.agent_id, r.status, ${SYSTEM_CLASS} AS class, COUNT(*) AS count, SUM(${HAS_CONFIDENCE}) AS with_confidence ${systemDecided(this.driven)} AND ${sql} ${groupBy}, ${SYSTEM_CLASS}`,
        bind,
      ),
      this.select<Row>(`SELECT r.task_type, r.agent_id, r.status, SUM(${EXTRA_WEIGHT}) AS extra ${auditSampled(this.driven)} AND ${sql} ${groupBy}`, bind),
    ]);
    const groups = new Map<Key, PopulationGroup>();
    const group = (row: Row, cls: ReviewClass): PopulationGroup => {
      const key = keyOf(row.task_type, row.agent_id, row.status, cls);
      const found = groups.get(key) ?? { task_type: row.task_type, agent_id: row.agent_id === null ? null : Number(row.agent_id), status: row.status, class: cls, count: 0, weight: 0, with_confidence: 0 };
      groups.set(key, found);
      return found;
    };
    for (const row of all) {
      const target = group(row, row.status === 'pending' ? 'pending' : 'decided');
      target.count += Number(row.count);
      target.weight += Number(row.count);
      target.with_confidence += Number(row.with_confidence);
    }
    for (const row of system) {
      const [decided, apart] = [group(row, 'decided'), group(row, row.class!)];
      for (const target of [apart, decided]) {
        const sign = target === apart ? 1 : -1;
        target.count += sign * Number(row.count);
        target.weight += sign * Number(row.count);
        target.with_confidence += sign * Number(row.with_confidence);
      }
    }
    for (const row of sampled) group(row, 'decided').weight += Number(row.extra);
    return [...groups.values()].filter((found) => found.count > 0);
  }

  async scores(filter: PopulationFilter): Promise<ScoreGroup[]> {
    const { sql, bind } = where(filter);
    // Thousandths, rounded down: SQLite's CAST truncates (confidences are never negative); PostgreSQL's would round.
    const score = this.db.sql.name === 'postgres' ? 'FLOOR(r.confidence_score * 1000)' : 'CAST(r.confidence_score * 1000 AS INTEGER)';
    const sums = (weight: string) =>
      `SELECT ${score} AS score, SUM(${weight}) AS count, SUM(${weight} * ${APPROVED}) AS sum_approved, SUM(${weight} * r.confidence_score) AS sum_confidence,
              SUM(${weight} * r.confidence_score * r.confidence_score) AS sum_confidence_squared, SUM(${weight} * r.confidence_score * ${APPROVED}) AS sum_confidence_approved`;
    const decided = `AND ${sql} AND r.status <> 'pending' AND r.confidence_score IS NOT NULL GROUP BY ${score}`;
    type Row = Record<keyof ScoreGroup, number | string>;
    const [all, system, sampled] = await Promise.all([
      this.select<Row>(`${sums('1.0')} FROM reviews r WHERE 1 = 1 ${decided}`, bind),
      this.select<Row>(`${sums('1.0')} ${systemDecided(this.driven)} ${decided}`, bind),
      this.select<Row>(`${sums(EXTRA_WEIGHT)} ${auditSampled(this.driven)} ${decided}`, bind),
    ]);
    const fields = ['count', 'sum_approved', 'sum_confidence', 'sum_confidence_squared', 'sum_confidence_approved'] as const;
    const groups = new Map<number, ScoreGroup>();
    for (const [rows, sign] of [[all, 1], [system, -1], [sampled, 1]] as const) {
      for (const row of rows) {
        const at = Number(row.score);
        const found = groups.get(at) ?? { score: at, count: 0, sum_approved: 0, sum_confidence: 0, sum_confidence_squared: 0, sum_confidence_approved: 0 };
        for (const field of fields) found[field] += sign * Number(row[field]);
        groups.set(at, found);
      }
    }
    // Sums corrected to nothing are the bins only system decisions filled.
    return [...groups.values()].filter((found) => found.count > 1e-9);
  }

  async durationsAtRanks(filter: PopulationFilter, ranks: readonly number[]): Promise<Map<number, number>> {
    const { sql, bind } = where(filter);
    const wanted = ranks.map((rank, index) => {
      bind[`rank_${index}`] = rank;
      return `$rank_${index}`;
    });
    const rows = await this.select<{ place: number; waited: number }>(
      `SELECT place, waited FROM (
         SELECT (r.decided_at - r.created_at) AS waited, ROW_NUMBER() OVER (ORDER BY r.decided_at - r.created_at) AS place
         FROM reviews r WHERE ${sql} AND r.status <> 'pending'
           AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.review_id = r.id AND ${SYSTEM_DECISION})) ranked
       WHERE place IN (${wanted.join(', ')})`,
      bind,
    );
    return new Map(rows.map((row) => [Number(row.place), Number(row.waited) / 1000]));
  }

  async recentVotes(filter: PopulationFilter, limit: number): Promise<VotedReview[]> {
    const { sql, bind } = where(filter);
    // From the workflows' own table, newest first: most organizations' reviews have none.
    const rows = await this.select<{ state: string }>(
      `SELECT w.state FROM review_workflows w ${this.driven} reviews r ON r.id = w.review_id
       WHERE w.organization_id = $organizationId AND ${sql} AND r.status <> 'pending'
         AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.review_id = r.id AND ${SYSTEM_DECISION})
       ORDER BY w.review_id DESC LIMIT $limit`,
      { ...bind, limit },
    );
    return rows.map((row) => ((JSON.parse(row.state) as { votes?: VotedReview }).votes ?? []).map((vote) => ({ decision_type: vote.decision_type })));
  }

  async recentModifications(filter: PopulationFilter, limit: number): Promise<ModifiedPair[]> {
    const { sql, bind } = where(filter);
    const rows = await this.select<{ proposed: string; approved: string | null }>(
      `SELECT r.proposed_action AS proposed, d.modified_action AS approved FROM reviews r JOIN decisions d ON d.review_id = r.id
       WHERE ${sql} AND r.status = 'modified' AND NOT (d.reviewer_name IS NOT NULL AND ${SYSTEM_DECISION}) ORDER BY r.id DESC LIMIT $limit`,
      { ...bind, limit },
    );
    return rows.filter((row) => row.approved !== null).map((row) => ({ proposed: row.proposed, approved: row.approved! }));
  }

  private select<Row extends object>(sql: string, bind: Record<string, unknown>): Promise<Row[]> {
    return this.db.sequelize.query<Row>(sql, { bind, type: QueryTypes.SELECT });
  }
}
