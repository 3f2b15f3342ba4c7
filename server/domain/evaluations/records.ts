/** Evaluation suites and their runs (hosted edition). */

export const SCHEDULES = ['daily', 'weekly'] as const;
export type Schedule = (typeof SCHEDULES)[number];

export const RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Which of the organization's reviews a suite looks at; every one given must hold. */
export interface EvalFilters {
  task_type?: string[];
  framework?: string[];
  agent_id?: number[];
  /** Reviews created at or after (ISO 8601). */
  since?: string;
  /** Reviews created before (ISO 8601). */
  until?: string;
}

export interface EvalRecord {
  id: number;
  organization_id: number;
  name: string;
  filters: EvalFilters;
  target_precision: number;
  confidence: number;
  /** Thresholds, walked from the highest down; in thousandths, as confidences are binned. */
  grid: number[];
  min_samples: number;
  schedule: Schedule | null;
  /** When a scheduled suite runs next; null without a schedule. */
  next_run_at: string | null;
  created_at: string;
  updated_at: string;
}

export type EvalFields = Pick<EvalRecord, 'name' | 'filters' | 'target_precision' | 'confidence' | 'grid' | 'min_samples' | 'schedule'>;

export interface EvalRunRecord {
  id: number;
  eval_id: number;
  status: RunStatus;
  triggered_by: 'manual' | 'schedule';
  started_at: string;
  finished_at: string | null;
  /** The result document once the run succeeded (see result.ts). */
  result: Record<string, unknown> | null;
  /** Why it failed, for a failed run. */
  error: string | null;
}
