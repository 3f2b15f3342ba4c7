/** What evaluation suites need from the world (hosted edition). */

import type { Tx } from '../shared/unit-of-work';
import type { BinSums } from './statistics';
import type { EvalFields, EvalRecord, EvalRunRecord, RunStatus } from './records';

/** A suite's filters as the store applies them: times in epoch milliseconds. */
export interface PopulationFilter {
  organizationId: number;
  task_type?: string[];
  framework?: string[];
  agent_id?: number[];
  since?: number;
  until?: number;
}

/** How a review left the queue, for the population: decided by a person, or set apart. */
export type ReviewClass = 'decided' | 'expired' | 'auto_decided' | 'pending';

/** Reviews of one task type, agent, status and class: their number and their weight (an audit-sample review weighs 1 / its rate). */
export interface PopulationGroup {
  task_type: string;
  agent_id: number | null;
  status: string;
  class: ReviewClass;
  count: number;
  weight: number;
  /** Of these, how many gave a confidence. */
  with_confidence: number;
}

/** Person-decided reviews with a confidence in one thousandth [score/1000, (score+1)/1000), weighted. */
export interface ScoreGroup extends Omit<BinSums, 'bin'> {
  /** The confidence in thousandths, rounded down. */
  score: number;
}

/** The votes of one decided review its workflow collected, in the order cast. */
export type VotedReview = Array<{ decision_type: string }>;

export interface ModifiedPair {
  proposed: string;
  approved: string;
}

/** The aggregates a run is computed from: each one query, counted and summed by the database. */
export interface EvaluationQueries {
  population(filter: PopulationFilter): Promise<PopulationGroup[]>;
  scores(filter: PopulationFilter): Promise<ScoreGroup[]>;
  /** Seconds from creation to decision of person-decided reviews at the given 1-based ranks (ascending). */
  durationsAtRanks(filter: PopulationFilter, ranks: readonly number[]): Promise<Map<number, number>>;
  /** The votes of the most recent person-decided reviews a workflow governed, at most `limit` reviews. */
  recentVotes(filter: PopulationFilter, limit: number): Promise<VotedReview[]>;
  /** The proposed and approved actions of the most recent modified reviews, at most `limit`. */
  recentModifications(filter: PopulationFilter, limit: number): Promise<ModifiedPair[]>;
}

export interface EvalRepository {
  insert(tx: Tx, organizationId: number, fields: EvalFields, nextRunAt: number | null, now: number): Promise<EvalRecord>;
  list(organizationId: number): Promise<EvalRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<EvalRecord | null>;
  update(tx: Tx, organizationId: number, id: number, fields: EvalFields, nextRunAt: number | null, now: number): Promise<EvalRecord>;
  /** Deletes the suite and its runs. */
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  insertRun(tx: Tx, organizationId: number, evalId: number, triggeredBy: EvalRunRecord['triggered_by'], now: number): Promise<EvalRunRecord>;
  finishRun(tx: Tx, runId: number, status: Exclude<RunStatus, 'running'>, result: Record<string, unknown> | null, error: string | null, now: number): Promise<EvalRunRecord>;
  /** Newest first, after the run `before` when given. */
  listRuns(organizationId: number, evalId: number, limit: number, before?: number): Promise<EvalRunRecord[]>;
  findRun(organizationId: number, evalId: number, runId: number): Promise<EvalRunRecord | null>;
  /**
   * One scheduled suite due at `now`, its row held for the transaction (PostgreSQL: FOR UPDATE
   * SKIP LOCKED, so two processes never claim the same one); null when none is due.
   */
  claimDue(tx: Tx, now: number): Promise<EvalRecord | null>;
  setNextRun(tx: Tx, id: number, nextRunAt: number): Promise<void>;
  /** Marks failed, with `error`, the runs still running that started before `before`; how many. */
  failAbandoned(tx: Tx, before: number, error: string, now: number): Promise<number>;
}
