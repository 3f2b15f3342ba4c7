/**
 * The suggested auto-approve rule: the lowest confidence threshold from a grid fixed in advance
 * at and above which the reviews people approved as proposed reach a target precision, with a
 * one-sided lower confidence bound — found by fixed-sequence testing, so that testing many
 * thresholds does not spend the confidence more than once.
 */
import { clopperPearsonLower } from './statistics';

/** The grid when a suite names none: 0.9, 0.8, …, 0.1, walked from the top. */
export const DEFAULT_GRID: readonly number[] = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1];
export const DEFAULT_TARGET_PRECISION = 0.95;
export const DEFAULT_CONFIDENCE = 0.95;
export const DEFAULT_MIN_SAMPLES = 30;
/** The share of reviews an auto-decide rule still sends to a person, unless it says otherwise. */
export const DEFAULT_AUDIT_SAMPLE_RATE = 0.05;

/** Reviews with a confidence at or above one threshold, and how many of them were approved as proposed (weighted). */
export interface ThresholdCounts {
  threshold: number;
  count: number;
  approved: number;
}

export interface ThresholdStep extends ThresholdCounts {
  /** Null where the threshold was skipped for too few reviews. */
  lower_bound: number | null;
  /** Null where it was skipped, or never reached after an earlier failure. */
  passed: boolean | null;
  skipped: boolean;
}

export interface SuggestionSettings {
  target_precision: number;
  confidence: number;
  min_samples: number;
  grid: readonly number[];
}

export type SuggestionStatus = 'ok' | 'insufficient_data' | 'not_reached';

export interface Suggestion {
  status: SuggestionStatus;
  threshold: number | null;
  count: number | null;
  approved: number | null;
  lower_bound: number | null;
  target: number;
  confidence: number;
  /** The fewest reviews at or above a threshold that it is tested on: max(min_samples, ⌈ln δ / ln t⌉). */
  min_count: number;
  steps: ThresholdStep[];
  /** insufficient_data only: how many more decided reviews at or above the grid's lowest threshold the first test needs. */
  needed?: number;
  /** What the answer promises, in words. */
  guarantee: string;
}

/**
 * Below ⌈ln δ / ln t⌉ reviews not even a clean sweep of approvals could pass (tⁿ > δ), so a test
 * there would only fail and end the walk; min_samples keeps the bound away from tiny samples.
 */
export function minimumCount(settings: Pick<SuggestionSettings, 'target_precision' | 'confidence' | 'min_samples'>): number {
  const delta = 1 - settings.confidence;
  return Math.max(settings.min_samples, Math.ceil(Math.log(delta) / Math.log(settings.target_precision) - 1e-9));
}

function percent(value: number): string {
  return `${Math.round(value * 1000) / 10} %`;
}

/**
 * Walks the grid from high to low: a threshold with fewer than the minimum count is skipped;
 * at each other one the Clopper–Pearson lower bound of its approvals is tested against the
 * target; the walk stops at the first failure and answers the last threshold that passed.
 * Because each test is made only if all before it passed, the chance that the answer's true
 * precision is below the target is at most δ (fixed-sequence testing, Westfall and Krishen 2001).
 * Never a threshold when none passed: `not_reached` if the first tested one failed,
 * `insufficient_data` (with how many more reviews) if none could be tested.
 */
export function suggestThreshold(counts: readonly ThresholdCounts[], settings: SuggestionSettings): Suggestion {
  const minCount = minimumCount(settings);
  const byThreshold = new Map(counts.map((row) => [row.threshold, row]));
  const grid = [...new Set(settings.grid)].sort((a, b) => b - a);
  const steps: ThresholdStep[] = [];
  let last: ThresholdStep | null = null;
  let failed = false;
  for (const threshold of grid) {
    const row = byThreshold.get(threshold) ?? { threshold, count: 0, approved: 0 };
    if (failed) {
      steps.push({ ...row, lower_bound: null, passed: null, skipped: false });
      continue;
    }
    if (row.count < minCount) {
      steps.push({ ...row, lower_bound: null, passed: null, skipped: true });
      continue;
    }
    const lowerBound = clopperPearsonLower(row.approved, row.count, settings.confidence);
    const passed = lowerBound >= settings.target_precision;
    const step: ThresholdStep = { ...row, lower_bound: Math.round(lowerBound * 1e6) / 1e6, passed, skipped: false };
    steps.push(step);
    if (passed) last = step;
    else failed = true;
  }
  const base = { target: settings.target_precision, confidence: settings.confidence, min_count: minCount, steps };
  if (last) {
    return {
      ...base,
      status: 'ok',
      threshold: last.threshold,
      count: last.count,
      approved: last.approved,
      lower_bound: last.lower_bound,
      guarantee:
        `With ${percent(settings.confidence)} confidence, at least ${percent(settings.target_precision)} of the reviews with a confidence of ${last.threshold} or more ` +
        `would have been approved as proposed, provided future reviews resemble these ${Math.round(last.count)}.`,
    };
  }
  if (failed) {
    return {
      ...base,
      status: 'not_reached',
      threshold: null,
      count: null,
      approved: null,
      lower_bound: null,
      guarantee: `No threshold on the grid can be shown, with ${percent(settings.confidence)} confidence, to reach ${percent(settings.target_precision)} approvals as proposed: the first one tested fell short.`,
    };
  }
  const largest = Math.max(0, ...steps.map((step) => step.count));
  return {
    ...base,
    status: 'insufficient_data',
    threshold: null,
    count: null,
    approved: null,
    lower_bound: null,
    needed: Math.ceil(minCount - largest),
    guarantee: `Too few decided reviews to test any threshold: each needs at least ${minCount} at or above it.`,
  };
}

/** The filters of a suite that a routing rule's conditions can express (dates cannot). */
export interface RuleFilters {
  task_type?: string[];
  framework?: string[];
  agent_id?: number[];
}

/** The body of a shadow auto-approve routing rule for a threshold, ready to POST /routing-rules. */
export function shadowRuleBody(name: string, threshold: number, filters: RuleFilters): Record<string, unknown> {
  const conditions: Record<string, unknown> = { confidence_score: { operator: '>=', value: threshold } };
  for (const field of ['task_type', 'framework', 'agent_id'] as const) {
    const values = filters[field];
    if (values && values.length > 0) conditions[field] = { operator: 'in', value: values };
  }
  return {
    name: `Auto-approve: ${name} at confidence ≥ ${threshold}`.slice(0, 200),
    priority: 100,
    conditions,
    action: { auto_decide: 'approve' },
    mode: 'shadow',
    audit_sample_rate: DEFAULT_AUDIT_SAMPLE_RATE,
    is_active: true,
  };
}
