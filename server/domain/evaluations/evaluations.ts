import { invalidInput, notFound, refuseNul } from '../shared/errors';
import type { Principal } from '../shared/principal';
import { organizationOf, organizationOfCaller } from '../shared/scope';
import { type Clock, SYSTEM, type UnitOfWork } from '../shared/unit-of-work';
import { evaluate } from './evaluate';
import type { EvalRepository, EvaluationQueries } from './ports';
import type { EvalFields, EvalFilters, EvalRecord, EvalRunRecord, Schedule } from './records';
import { DEFAULT_CONFIDENCE, DEFAULT_GRID, DEFAULT_MIN_SAMPLES, DEFAULT_TARGET_PRECISION } from './suggested-rule';

export interface EvalInput {
  name: string;
  organization_id?: number | null;
  filters?: EvalFilters;
  target_precision?: number;
  confidence?: number;
  grid?: number[];
  min_samples?: number;
  schedule?: Schedule | null;
}

export type EvalChanges = Partial<Omit<EvalInput, 'organization_id'>>;

const PERIOD_MS: Record<Schedule, number> = { daily: 24 * 3_600_000, weekly: 7 * 24 * 3_600_000 };
/**
 * A run takes seconds; one still running after an hour lost its process (stopped, killed) and
 * will never finish. The scheduler's next look says so on it rather than leave it running.
 */
const ABANDONED_AFTER_MS = 3_600_000;

/** A run as started: its record now, and the same record once it has finished. */
export interface StartedRun {
  run: EvalRunRecord;
  finished: Promise<EvalRunRecord>;
}

/**
 * Thresholds are compared with confidences counted in thousandths (the store's aggregates), so a
 * grid value must be one: 0.95 is, 0.9512 is not. Descending and without repeats, as walked.
 */
function checkedGrid(grid: readonly number[]): number[] {
  for (const [index, value] of grid.entries()) {
    if (Math.abs(value * 1000 - Math.round(value * 1000)) > 1e-6) throw invalidInput(`grid[${index}]`, 'must be a multiple of 0.001 (confidences are compared in thousandths)');
  }
  const unique = [...new Set(grid.map((value) => Math.round(value * 1000) / 1000))].sort((a, b) => b - a);
  if (unique.length !== grid.length) throw invalidInput('grid', 'must not repeat a threshold');
  return unique;
}

function checkedFilters(filters: EvalFilters): EvalFilters {
  if (filters.since && filters.until && Date.parse(filters.since) >= Date.parse(filters.until)) throw invalidInput('filters.until', 'must be after filters.since');
  for (const field of ['task_type', 'framework'] as const) for (const value of filters[field] ?? []) refuseNul({ [`filters.${field}`]: value });
  return filters;
}

/**
 * Evaluation suites (hosted edition): what a team's agents proposed against what its people
 * decided, and the auto-approve rule the record supports. Runs are computed from aggregates
 * (evaluate.ts); a scheduled suite runs once per period among all processes.
 */
export class Evaluations {
  constructor(
    private readonly evals: EvalRepository,
    private readonly queries: EvaluationQueries,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, input: EvalInput): Promise<EvalRecord> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const fields: EvalFields = {
      name: input.name.trim(),
      filters: checkedFilters(input.filters ?? {}),
      target_precision: input.target_precision ?? DEFAULT_TARGET_PRECISION,
      confidence: input.confidence ?? DEFAULT_CONFIDENCE,
      grid: checkedGrid(input.grid ?? DEFAULT_GRID),
      min_samples: input.min_samples ?? DEFAULT_MIN_SAMPLES,
      schedule: input.schedule ?? null,
    };
    const now = this.clock();
    return this.unitOfWork.run(async (tx) => {
      const created = await this.evals.insert(tx, organizationId, fields, this.nextRun(fields.schedule, now), now);
      tx.audit({ organization_id: organizationId, action: 'eval.created', target_type: 'eval', target_id: created.id, data: { ...fields } });
      return created;
    }, { by: principal });
  }

  async list(principal: Principal): Promise<{ evals: EvalRecord[]; count: number }> {
    const evals = await this.evals.list(organizationOfCaller(principal));
    return { evals, count: evals.length };
  }

  async get(principal: Principal, id: number): Promise<EvalRecord> {
    const found = await this.evals.find(organizationOfCaller(principal), id);
    if (!found) throw notFound('eval', id);
    return found;
  }

  /** A changed schedule starts its period anew; the suite's past runs keep the settings they ran with. */
  async update(principal: Principal, id: number, changes: EvalChanges): Promise<EvalRecord> {
    refuseNul(changes);
    const organizationId = organizationOfCaller(principal);
    const now = this.clock();
    return this.unitOfWork.run(async (tx) => {
      const current = await this.evals.find(organizationId, id, tx);
      if (!current) throw notFound('eval', id);
      const fields: EvalFields = {
        name: changes.name?.trim() ?? current.name,
        filters: changes.filters ? checkedFilters(changes.filters) : current.filters,
        target_precision: changes.target_precision ?? current.target_precision,
        confidence: changes.confidence ?? current.confidence,
        grid: changes.grid ? checkedGrid(changes.grid) : current.grid,
        min_samples: changes.min_samples ?? current.min_samples,
        schedule: changes.schedule === undefined ? current.schedule : changes.schedule,
      };
      const nextRunAt = changes.schedule === undefined ? (current.next_run_at === null ? null : Date.parse(current.next_run_at)) : this.nextRun(fields.schedule, now);
      const updated = await this.evals.update(tx, organizationId, id, fields, nextRunAt, now);
      tx.audit({ organization_id: organizationId, action: 'eval.updated', target_type: 'eval', target_id: id, data: { changed: Object.keys(changes) } });
      return updated;
    }, { by: principal });
  }

  async delete(principal: Principal, id: number): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.evals.delete(tx, organizationId, id))) throw notFound('eval', id);
      tx.audit({ organization_id: organizationId, action: 'eval.deleted', target_type: 'eval', target_id: id, data: {} });
    }, { by: principal });
  }

  /** Starts a run now: its record at once, and the same once finished. */
  async startRun(principal: Principal, id: number): Promise<StartedRun> {
    const organizationId = organizationOfCaller(principal);
    const { suite, run } = await this.unitOfWork.run(async (tx) => {
      const suite = await this.evals.find(organizationId, id, tx);
      if (!suite) throw notFound('eval', id);
      const run = await this.evals.insertRun(tx, organizationId, id, 'manual', this.clock());
      tx.audit({ organization_id: organizationId, action: 'eval.run_started', target_type: 'eval', target_id: id, data: { run_id: run.id } });
      return { suite, run };
    }, { by: principal });
    return { run, finished: this.execute(suite, run) };
  }

  /** Newest first, `limit` at a time; `cursor` is the `next_cursor` of the page before. */
  async listRuns(principal: Principal, id: number, limit: number, cursor: number | null): Promise<{ runs: EvalRunRecord[]; next_cursor: number | null }> {
    const organizationId = organizationOfCaller(principal);
    if (!(await this.evals.find(organizationId, id))) throw notFound('eval', id);
    const runs = await this.evals.listRuns(organizationId, id, limit + 1, cursor ?? undefined);
    const page = runs.slice(0, limit);
    return { runs: page, next_cursor: runs.length > limit ? page[page.length - 1].id : null };
  }

  async getRun(principal: Principal, id: number, runId: number): Promise<EvalRunRecord> {
    const run = await this.evals.findRun(organizationOfCaller(principal), id, runId);
    if (!run) throw notFound('eval run', runId);
    return run;
  }

  /**
   * Runs every scheduled suite that is due, each once: the claim moves its next run a period on
   * in the same transaction that records the run, so another process finds it no longer due.
   */
  async runDue(): Promise<number> {
    const started = this.clock();
    await this.unitOfWork.run((tx) => this.evals.failAbandoned(tx, started - ABANDONED_AFTER_MS, 'the process running it stopped before it finished; run the suite again', started), {
      by: SYSTEM,
    });
    let ran = 0;
    for (;;) {
      const now = this.clock();
      const claimed = await this.unitOfWork.run(async (tx) => {
        const suite = await this.evals.claimDue(tx, now);
        if (!suite || !suite.schedule) return null;
        await this.evals.setNextRun(tx, suite.id, this.nextRun(suite.schedule, now)!);
        const run = await this.evals.insertRun(tx, suite.organization_id, suite.id, 'schedule', now);
        tx.audit({ organization_id: suite.organization_id, action: 'eval.run_started', target_type: 'eval', target_id: suite.id, data: { run_id: run.id, triggered_by: 'schedule' } });
        return { suite, run };
      }, { by: SYSTEM });
      if (!claimed) return ran;
      await this.execute(claimed.suite, claimed.run);
      ran += 1;
    }
  }

  private nextRun(schedule: Schedule | null, now: number): number | null {
    return schedule === null ? null : now + PERIOD_MS[schedule];
  }

  /** Computes the result and stores it; a failure to compute is stored as the run's error. */
  private async execute(suite: EvalRecord, run: EvalRunRecord): Promise<EvalRunRecord> {
    let result: Record<string, unknown> | null = null;
    let error: string | null = null;
    try {
      result = await evaluate(this.queries, suite);
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
    }
    return this.unitOfWork.run((tx) => this.evals.finishRun(tx, run.id, error === null ? 'succeeded' : 'failed', result, error, this.clock()), { by: SYSTEM });
  }
}
