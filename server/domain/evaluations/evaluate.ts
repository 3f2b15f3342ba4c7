/**
 * One run of a suite: the population and its outcome as the contract defines them, and every
 * figure of the result, from aggregates the database counts and sums. The rows themselves are
 * never loaded; only the samples named below, bounded and with their sizes in the result.
 */
import type { EvaluationQueries, PopulationFilter, PopulationGroup } from './ports';
import type { EvalFilters, EvalRecord } from './records';
import {
  agreement,
  auroc,
  type BinSums,
  binOf,
  calibrationFrom,
  CALIBRATION_BINS,
  type Interval,
  median,
  nearestRank,
  normalisedEditDistance,
  wilsonInterval,
} from './statistics';
import { shadowRuleBody, suggestThreshold, type ThresholdCounts } from './suggested-rule';

/** The most recent modified reviews whose edit distance is measured. */
export const EDIT_DISTANCE_SAMPLE = 200;
/** The most recent workflow-governed reviews whose votes are paired. */
export const AGREEMENT_SAMPLE = 5_000;
const VOTE_CATEGORIES = ['approve', 'modify', 'reject'];
const OUTCOMES = ['approved', 'modified', 'rejected'] as const;

export interface Rate {
  count: number;
  share: number | null;
  interval: Interval | null;
}

type Rates = Record<(typeof OUTCOMES)[number], Rate> & { decided: number };

function round(value: number, digits = 6): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Approved, modified and rejected among weighted person-decided groups, each with a Wilson interval. */
function ratesOf(groups: readonly PopulationGroup[]): Rates {
  const decided = groups.reduce((acc, group) => acc + group.weight, 0);
  const rate = (status: string): Rate => {
    const count = groups.filter((group) => group.status === status).reduce((acc, group) => acc + group.weight, 0);
    const interval = wilsonInterval(count, decided);
    return {
      count: round(count, 3),
      share: decided > 0 ? round(count / decided) : null,
      interval: interval && { lower: round(interval.lower), upper: round(interval.upper) },
    };
  };
  return { decided: round(decided, 3), approved: rate('approved'), modified: rate('modified'), rejected: rate('rejected') };
}

/** The groups split by one key, each with its rates, the largest first. */
function ratesBy<K extends 'task_type' | 'agent_id'>(groups: readonly PopulationGroup[], key: K): Array<{ [P in K]: PopulationGroup[K] } & Rates> {
  const split = new Map<PopulationGroup[K], PopulationGroup[]>();
  for (const group of groups) split.set(group[key], [...(split.get(group[key]) ?? []), group]);
  return [...split.entries()]
    .map(([value, members]) => ({ [key]: value, ...ratesOf(members) }) as { [P in K]: PopulationGroup[K] } & Rates)
    .sort((a, b) => b.decided - a.decided);
}

export function populationFilter(organizationId: number, filters: EvalFilters): PopulationFilter {
  return {
    organizationId,
    ...(filters.task_type?.length ? { task_type: filters.task_type } : {}),
    ...(filters.framework?.length ? { framework: filters.framework } : {}),
    ...(filters.agent_id?.length ? { agent_id: filters.agent_id } : {}),
    ...(filters.since ? { since: Date.parse(filters.since) } : {}),
    ...(filters.until ? { until: Date.parse(filters.until) } : {}),
  };
}

/** Computes a run's result document. */
export async function evaluate(queries: EvaluationQueries, suite: EvalRecord): Promise<Record<string, unknown>> {
  const filter = populationFilter(suite.organization_id, suite.filters);
  const [groups, scores] = await Promise.all([queries.population(filter), queries.scores(filter)]);
  const decidedGroups = groups.filter((group) => group.class === 'decided');
  const counted = (cls: string) => groups.filter((group) => group.class === cls).reduce((acc, group) => acc + group.count, 0);
  const decidedCount = counted('decided');
  const expired = counted('expired');

  // Calibration: the thousandths fold into ten bins; AUROC ranks them, ties within one thousandth counting half.
  const bins = new Map<number, BinSums>();
  for (const score of scores) {
    const bin = binOf(score.score / 1000);
    const sum = bins.get(bin) ?? { bin, count: 0, sum_confidence: 0, sum_approved: 0, sum_confidence_squared: 0, sum_confidence_approved: 0 };
    sum.count += score.count;
    sum.sum_confidence += score.sum_confidence;
    sum.sum_approved += score.sum_approved;
    sum.sum_confidence_squared += score.sum_confidence_squared;
    sum.sum_confidence_approved += score.sum_confidence_approved;
    bins.set(bin, sum);
  }
  const calibration = calibrationFrom(
    [...bins.values()],
    auroc(scores.map((score) => ({ score: score.score, positives: score.sum_approved, negatives: score.count - score.sum_approved }))),
  );

  // The suggested rule: reviews at or above each threshold, from the same thousandths.
  const thresholds: ThresholdCounts[] = suite.grid.map((threshold) => {
    const at = Math.round(threshold * 1000);
    const above = scores.filter((score) => score.score >= at);
    return { threshold, count: round(above.reduce((acc, s) => acc + s.count, 0), 3), approved: round(above.reduce((acc, s) => acc + s.sum_approved, 0), 3) };
  });
  const suggestion = suggestThreshold(thresholds, suite);
  const weightedDecided = decidedGroups.reduce((acc, group) => acc + group.weight, 0);
  const suggestedRule = {
    ...suggestion,
    would_auto_decide:
      suggestion.status === 'ok' ? { count: suggestion.count, share: weightedDecided > 0 ? round((suggestion.count ?? 0) / weightedDecided) : null } : null,
    rule:
      suggestion.status === 'ok'
        ? shadowRuleBody(suite.name, suggestion.threshold!, { task_type: suite.filters.task_type, framework: suite.filters.framework, agent_id: suite.filters.agent_id })
        : null,
  };

  // Time to decision, nearest rank, over person-decided reviews (unweighted: each is one wait).
  const percentiles = [50, 90, 99] as const;
  const ranks = percentiles.map((p) => nearestRank(p, decidedCount));
  const durations = decidedCount > 0 ? await queries.durationsAtRanks(filter, ranks) : new Map<number, number>();
  const seconds = (index: number) => (decidedCount > 0 ? round(durations.get(ranks[index]) ?? 0, 3) : null);

  // Agreement over a recent sample of reviews with two votes or more, each pair in the order cast.
  const voted = (await queries.recentVotes(filter, AGREEMENT_SAMPLE)).filter((votes) => votes.length >= 2);
  const table = VOTE_CATEGORIES.map(() => VOTE_CATEGORIES.map(() => 0));
  for (const votes of voted) {
    for (let i = 0; i < votes.length; i += 1) {
      for (let j = i + 1; j < votes.length; j += 1) {
        const first = VOTE_CATEGORIES.indexOf(votes[i].decision_type);
        const second = VOTE_CATEGORIES.indexOf(votes[j].decision_type);
        if (first >= 0 && second >= 0) table[first][second] += 1;
      }
    }
  }

  // Modification: the share from the counts; the edit distance over a recent bounded sample.
  const modifications = await queries.recentModifications(filter, EDIT_DISTANCE_SAMPLE);
  const distances = modifications.map((pair) => normalisedEditDistance(pair.proposed, pair.approved));
  const measured = distances.filter((distance): distance is number => distance !== null);
  const overall = ratesOf(decidedGroups);
  const medianDistance = median(measured);

  return {
    population: {
      decided: decidedCount,
      weighted_decided: round(weightedDecided, 3),
      with_confidence: decidedGroups.reduce((acc, group) => acc + group.with_confidence, 0),
      excluded: { expired, auto_decided: counted('auto_decided'), pending: counted('pending') },
    },
    rates: {
      overall,
      by_task_type: ratesBy(decidedGroups, 'task_type'),
      by_agent: ratesBy(decidedGroups, 'agent_id'),
    },
    calibration: { bin_count: CALIBRATION_BINS, ...calibration },
    suggested_rule: suggestedRule,
    agreement: { ...agreement(table), reviews: voted.length, sample_limit: AGREEMENT_SAMPLE },
    time_to_decision: {
      decided: decidedCount,
      p50_seconds: seconds(0),
      p90_seconds: seconds(1),
      p99_seconds: seconds(2),
      expired_share: decidedCount + expired > 0 ? round(expired / (decidedCount + expired)) : null,
    },
    modification: {
      share: overall.modified.share,
      median_edit_distance: medianDistance === null ? null : round(medianDistance),
      sample_size: measured.length,
      sample_limit: EDIT_DISTANCE_SAMPLE,
      too_long: distances.length - measured.length,
    },
  };
}
