import { loadConfig } from '../config/load';
import { INSTALLATION } from '../domain/shared/principal';
import { oneLine } from '../domain/shared/text';
import type { ReviewRecord, ReviewStatus } from '../domain/reviews/records';
import { openForReading } from './read-database';

export interface LogsOptions {
  config?: string;
  limit: number;
  statusFilter?: ReviewStatus;
}

export function age(from: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(from)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

export function describeDecision(review: ReviewRecord): string {
  const decision = review.decision;
  if (!decision) return '-';
  const by = decision.reviewer_name ? ` by ${decision.reviewer_name}` : '';
  if (decision.decision_type === 'modify') return `modify${by}: ${decision.modified_action ?? ''}`;
  return `${decision.decision_type}${by}${decision.notes ? `: ${decision.notes}` : ''}`;
}

/**
 * Lays rows out in columns; the last column takes what is left of the terminal. Every cell is
 * put on one line, its hidden characters written out, before it is measured: nothing an
 * agent wrote can move the cursor, recolour the terminal or reorder a line.
 */
export function formatTable(header: string[], rows: string[][], width: number): string {
  const table = [header, ...rows].map((row) => row.map((cell) => oneLine(cell, Number.POSITIVE_INFINITY)));
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  const fixed = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  widths[widths.length - 1] = Math.max(10, Math.min(widths[widths.length - 1], width - fixed));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? oneLine(cell, widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return table.map(line).join('\n') + '\n';
}

/** The most recent reviews as an aligned table, read from the database (the API need not run). */
export async function runLogs(options: LogsOptions, out: NodeJS.WritableStream & { columns?: number }): Promise<void> {
  const { config } = loadConfig({ file: options.config });
  const inspection = await openForReading(config);
  try {
    const filters = options.statusFilter ? { status: options.statusFilter } : {};
    const { reviews, total } = await inspection.reviews.list(INSTALLATION, filters, 1, options.limit);
    if (reviews.length === 0) {
      out.write(options.statusFilter ? `no ${options.statusFilter} reviews\n` : 'no reviews yet\n');
      return;
    }
    const now = Date.now();
    const rows = reviews.map((r) => [
      String(r.id),
      age(r.created_at, now),
      oneLine(r.task_type, 20),
      r.urgency,
      r.status,
      oneLine(r.proposed_action, 40),
      describeDecision(r),
    ]);
    out.write(formatTable(['ID', 'AGE', 'TASK TYPE', 'URGENCY', 'STATUS', 'ACTION', 'DECISION'], rows, out.columns ?? 120));
    if (total > reviews.length) out.write(`(${reviews.length} of ${total}; --limit shows more)\n`);
  } finally {
    await inspection.close();
  }
}
