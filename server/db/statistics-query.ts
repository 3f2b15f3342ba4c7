import { QueryTypes, type Sequelize } from 'sequelize';
import { type DecisionsOnDay, type Statistics, URGENCIES, type Urgency } from '../domain/records';

const DAY_MS = 86_400_000;
const DAYS_OF_HISTORY = 14;

interface Totals {
  total: number;
  pending: number | null;
  approved: number | null;
  rejected: number | null;
  modified: number | null;
  avg_confidence: number | null;
  avg_decision_ms: number | null;
}

type Breakdown = Array<{ key: string; count: number }>;

type DayRow = { day: number; approved: number | null; rejected: number | null; modified: number | null };

/**
 * The figures of GET /stats, one aggregate query per figure group (totals, one GROUP BY per
 * breakdown, one for decisions per day) over indexed columns; no review is loaded into
 * memory. Reviews without a framework are left out of the framework breakdown.
 */
export async function queryStatistics(sequelize: Sequelize, organizationId: number | undefined, now: number): Promise<Statistics> {
  const scoped = organizationId === undefined ? '' : 'WHERE organization_id = :organizationId';
  const alsoScoped = organizationId === undefined ? '' : 'AND organization_id = :organizationId';
  const firstDay = Math.floor(now / DAY_MS) - (DAYS_OF_HISTORY - 1);
  const options = { type: QueryTypes.SELECT, replacements: { organizationId, since: firstDay * DAY_MS } } as const;
  const countBy = (column: string, extra = ''): Promise<Breakdown> =>
    sequelize.query<{ key: string; count: number }>(
      `SELECT ${column} AS key, COUNT(*) AS count FROM reviews WHERE 1 = 1 ${extra} ${alsoScoped} GROUP BY ${column}`,
      options,
    );

  const [[totals], taskTypes, frameworks, urgencies, days] = await Promise.all([
    sequelize.query<Totals>(
      `SELECT COUNT(*) AS total,
              SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending,
              SUM(CASE WHEN status = 'approved' THEN 1 ELSE 0 END) AS approved,
              SUM(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END) AS rejected,
              SUM(CASE WHEN status = 'modified' THEN 1 ELSE 0 END) AS modified,
              AVG(confidence_score) AS avg_confidence,
              AVG(decided_at - created_at) AS avg_decision_ms
         FROM reviews ${scoped}`,
      options,
    ),
    countBy('task_type'),
    countBy('framework', 'AND framework IS NOT NULL'),
    countBy('urgency'),
    sequelize.query<DayRow>(
      `SELECT decided_at / ${DAY_MS} AS day,
              SUM(CASE WHEN status = 'approved' THEN 1 ELSE 0 END) AS approved,
              SUM(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END) AS rejected,
              SUM(CASE WHEN status = 'modified' THEN 1 ELSE 0 END) AS modified
         FROM reviews WHERE decided_at >= :since ${alsoScoped} GROUP BY day`,
      options,
    ),
  ]);

  const urgencyBreakdown = Object.fromEntries(URGENCIES.map((u) => [u, 0])) as Record<Urgency, number>;
  for (const { key, count } of urgencies) urgencyBreakdown[key as Urgency] = Number(count);

  return {
    total_reviews: Number(totals.total),
    pending_reviews: Number(totals.pending ?? 0),
    approved_reviews: Number(totals.approved ?? 0),
    rejected_reviews: Number(totals.rejected ?? 0),
    modified_reviews: Number(totals.modified ?? 0),
    avg_confidence_score: totals.avg_confidence === null ? null : Number(totals.avg_confidence),
    avg_seconds_to_decision: totals.avg_decision_ms === null ? null : Number(totals.avg_decision_ms) / 1000,
    task_type_breakdown: breakdownObject(taskTypes),
    framework_breakdown: breakdownObject(frameworks),
    urgency_breakdown: urgencyBreakdown,
    decisions_over_time: everyDay(firstDay, days),
  };
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
