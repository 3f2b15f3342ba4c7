import { QueryTypes, type Sequelize } from 'sequelize';
import type { Scope } from '../domain/shared/principal';
import type { StatisticsSource } from '../domain/reviews/ports';
import { type DecisionsOnDay, type Statistics, URGENCIES, type Urgency } from '../domain/reviews/records';

const DAY_MS = 86_400_000;
const DAYS_OF_HISTORY = 14;

interface Totals {
  total: number | null;
  pending: number | null;
  approved: number | null;
  rejected: number | null;
  modified: number | null;
  confidence_sum: number | null;
  confidence_count: number | null;
  decision_ms_sum: number | null;
  decided: number | null;
}

type Breakdown = Array<{ key: string; count: number }>;

type DayRow = { day: number; approved: number | null; rejected: number | null; modified: number | null };

const byStatus = (status: string, column: string): string => `SUM(CASE WHEN status = '${status}' THEN ${column} ELSE 0 END)`;

/**
 * The figures of GET /stats, from the tallies the database keeps beside the reviews
 * (migration 0006): a few hundred rows to add up however many reviews are stored. Reviews
 * without a framework are left out of the framework breakdown.
 */
export async function queryStatistics(sequelize: Sequelize, organizationId: number | null, now: number): Promise<Statistics> {
  const scoped = organizationId === null ? '' : 'AND organization_id = :organizationId';
  const firstDay = Math.floor(now / DAY_MS) - (DAYS_OF_HISTORY - 1);
  const options = { type: QueryTypes.SELECT, replacements: { organizationId, firstDay } } as const;
  const countBy = (column: string, extra = ''): Promise<Breakdown> =>
    sequelize.query<{ key: string; count: number }>(
      `SELECT ${column} AS key, SUM(reviews) AS count FROM review_tallies WHERE 1 = 1 ${extra} ${scoped} GROUP BY ${column} HAVING SUM(reviews) > 0`,
      options,
    );

  const [[totals], taskTypes, frameworks, urgencies, days] = await Promise.all([
    sequelize.query<Totals>(
      `SELECT SUM(reviews) AS total, ${byStatus('pending', 'reviews')} AS pending, ${byStatus('approved', 'reviews')} AS approved,
              ${byStatus('rejected', 'reviews')} AS rejected, ${byStatus('modified', 'reviews')} AS modified,
              SUM(confidence_sum) AS confidence_sum, SUM(confidence_count) AS confidence_count,
              SUM(decision_ms_sum) AS decision_ms_sum, SUM(decided) AS decided
         FROM review_tallies WHERE 1 = 1 ${scoped}`,
      options,
    ),
    countBy('task_type'),
    countBy('framework', 'AND framework IS NOT NULL'),
    countBy('urgency'),
    sequelize.query<DayRow>(
      `SELECT day, ${byStatus('approved', 'decisions')} AS approved, ${byStatus('rejected', 'decisions')} AS rejected,
              ${byStatus('modified', 'decisions')} AS modified
         FROM decision_days WHERE day >= :firstDay ${scoped} GROUP BY day`,
      options,
    ),
  ]);

  const urgencyBreakdown = Object.fromEntries(URGENCIES.map((u) => [u, 0])) as Record<Urgency, number>;
  for (const { key, count } of urgencies) urgencyBreakdown[key as Urgency] = Number(count);

  return {
    total_reviews: Number(totals.total ?? 0),
    pending_reviews: Number(totals.pending ?? 0),
    approved_reviews: Number(totals.approved ?? 0),
    rejected_reviews: Number(totals.rejected ?? 0),
    modified_reviews: Number(totals.modified ?? 0),
    avg_confidence_score: average(totals.confidence_sum, totals.confidence_count),
    avg_seconds_to_decision: average(totals.decision_ms_sum, totals.decided, 1000),
    task_type_breakdown: breakdownObject(taskTypes),
    framework_breakdown: breakdownObject(frameworks),
    urgency_breakdown: urgencyBreakdown,
    decisions_over_time: everyDay(firstDay, days),
  };
}

/**
 * A running sum gathers floating-point dust as reviews move between tallies (0.7 arrives as
 * 0.7000000000000001); nine significant digits is more than any reader of an average needs.
 */
function average(sum: number | null, count: number | null, unit = 1): number | null {
  if (!count || Number(count) === 0) return null;
  return Number((Number(sum) / Number(count) / unit).toPrecision(9));
}

function everyDay(firstDay: number, rows: DayRow[]): DecisionsOnDay[] {
  const byDay = new Map(rows.map((row) => [Number(row.day), row]));
  return Array.from({ length: DAYS_OF_HISTORY }, (_, i) => {
    const row = byDay.get(firstDay + i);
    return {
      date: new Date((firstDay + i) * DAY_MS).toISOString().slice(0, 10),
      approved: Number(row?.approved ?? 0),
      rejected: Number(row?.rejected ?? 0),
      modified: Number(row?.modified ?? 0),
    };
  });
}

function breakdownObject(rows: Breakdown): Record<string, number> {
  return Object.fromEntries(rows.map(({ key, count }) => [key, Number(count)]));
}

/** GET /stats over the reviews of a scope. */
export class StatisticsQuery implements StatisticsSource {
  constructor(private readonly sequelize: Sequelize) {}

  statistics(scope: Scope, now: number): Promise<Statistics> {
    return queryStatistics(this.sequelize, scope.organizationId, now);
  }
}
