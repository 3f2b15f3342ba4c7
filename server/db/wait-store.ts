import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from './database';
import { transactionOf } from './unit-of-work';
import type { ReviewWaitRepository } from '../domain/reviews/ports';
import type { Tx } from '../domain/shared/unit-of-work';

/** A review's live waits: those whose `until` has not passed (a dead process's rows lapse by themselves). */
export function liveWaitsSql(now: number): string {
  return `SELECT review_id, until FROM review_waits WHERE until > ${Math.floor(now)}`;
}

/**
 * The latest `until` of the live waits on the review of the outer query (`reviews` by that
 * name), null once it is decided: its waits' rows are removed a moment after the decision.
 */
export function latestWaitSql(now: number): string {
  return `(CASE WHEN reviews.status = 'pending' THEN (SELECT MAX(until) FROM review_waits WHERE review_waits.review_id = reviews.id AND until > ${Math.floor(now)}) END)`;
}

/**
 * The waits of this API process in `review_waits`: written as one starts, removed as it ends;
 * other processes on the same PostgreSQL see them, so every process answers the same
 * `waiting_until`.
 */
export class ReviewWaitStore implements ReviewWaitRepository {
  /** This process among those sharing the database: its rows are the ones it removes at shutdown. */
  readonly processId = randomUUID();

  constructor(private readonly db: Database) {}

  async start(tx: Tx, reviewId: number, until: number, now: number): Promise<{ id: number; raised: boolean; latest: number | null }> {
    const transaction = transactionOf(tx);
    const before = await this.latest(reviewId, now, transaction);
    const id = await this.db.insertReturningId(
      'INSERT INTO review_waits (review_id, process_id, until) VALUES ($reviewId, $processId, $until)',
      { reviewId, processId: this.processId, until },
      transaction,
    );
    const raised = before === null || until > before;
    return { id, raised, latest: raised ? until : before };
  }

  async end(tx: Tx, waitId: number, now: number): Promise<{ lowered: boolean; latest: number | null }> {
    const transaction = transactionOf(tx);
    const [row] = await this.db.sequelize.query<{ review_id: number; until: string | number }>('SELECT review_id, until FROM review_waits WHERE id = $waitId', {
      bind: { waitId },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) return { lowered: false, latest: null };
    await this.db.sequelize.query('DELETE FROM review_waits WHERE id = $waitId', { bind: { waitId }, transaction });
    const after = await this.latest(row.review_id, now, transaction);
    return { lowered: after === null || after < Number(row.until), latest: after };
  }

  async endAllOfThisProcess(): Promise<void> {
    await this.db.write((transaction) => this.db.sequelize.query('DELETE FROM review_waits WHERE process_id = $processId', { bind: { processId: this.processId }, transaction }));
  }

  /**
   * Removes rows no process can be holding: on SQLite, which one process serves, all of them
   * (left by a process that was killed); on PostgreSQL those whose time has passed.
   */
  async clearStale(now: number): Promise<void> {
    await this.db.write((transaction) =>
      this.db.sql.sharedByProcesses
        ? this.db.sequelize.query('DELETE FROM review_waits WHERE until <= $now', { bind: { now }, transaction })
        : this.db.sequelize.query('DELETE FROM review_waits', { transaction }),
    );
  }

  /** The review's latest live wait. */
  private async latest(reviewId: number, now: number, transaction: Transaction): Promise<number | null> {
    const [row] = await this.db.sequelize.query<{ latest: string | number | null }>('SELECT MAX(until) AS latest FROM review_waits WHERE review_id = $reviewId AND until > $now', {
      bind: { reviewId, now },
      type: QueryTypes.SELECT,
      transaction,
    });
    return row?.latest === null || row?.latest === undefined ? null : Number(row.latest);
  }
}
