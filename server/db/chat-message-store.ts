import { QueryTypes } from 'sequelize';
import type { ChatMessageRepository, ClaimedChatMessage } from '../domain/chat/ports';
import type { ChatMessageRef } from '../domain/chat/records';
import type { Tx } from '../domain/shared/unit-of-work';
import type { Database } from './database';
import { transactionOf } from './unit-of-work';

const MAX_ERROR = 500;

/** Owed to the chat and free to take: changes the message does not show yet, due, held by no live claim. */
const DUE = "status = 'active' AND synced_version < version AND next_attempt_at <= $now AND (claimed_until IS NULL OR claimed_until < $now)";


/** The chat messages reviews owe one provider (`chat_messages`). */
export class ChatMessageStore implements ChatMessageRepository {
  constructor(
    private readonly db: Database,
    private readonly provider: string,
  ) {}

  async enqueuePost(tx: Tx, message: { review_id: number; organization_id: number | null; channel: string }, now: number): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO chat_messages (provider, review_id, organization_id, channel, version, synced_version, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($provider, $review_id, $organization_id, $channel, 1, 0, 'active', 0, $now, $now, $now)`,
      { bind: { provider: this.provider, ...message, now }, transaction: transactionOf(tx) },
    );
  }

  async markChanged(tx: Tx, reviewId: number, dueAt: number, now: number): Promise<void> {
    // In sync: due at `dueAt`. Owed already: a message settling (due later, no failed attempt)
    // is brought forward to a sooner `dueAt`; one waiting out a 429 or a back-off keeps waiting;
    // one not posted yet is due already.
    await this.db.sequelize.query(
      `UPDATE chat_messages SET version = version + 1, updated_at = $now,
       next_attempt_at = CASE WHEN synced_version = version THEN $dueAt WHEN attempts = 0 AND next_attempt_at > $dueAt THEN $dueAt ELSE next_attempt_at END
       WHERE review_id = $reviewId AND provider = $provider`,
      { bind: { reviewId, provider: this.provider, dueAt, now }, transaction: transactionOf(tx) },
    );
  }

  async claimDue(now: number, claimedUntil: number, limit: number): Promise<ClaimedChatMessage[]> {
    if (limit <= 0) return [];
    // Claimed only as they still are (PostgreSQL: a row another process is claiming is skipped, not waited for).
    const claimed = await this.db.write((transaction) =>
      this.db.sequelize.query<ClaimedChatMessage>(
        `UPDATE chat_messages SET claimed_until = $claimedUntil WHERE id IN (
           SELECT id FROM chat_messages WHERE provider = $provider AND ${DUE} ORDER BY next_attempt_at, id LIMIT $limit ${this.db.sql.skipLocked})
         RETURNING id, review_id, organization_id, channel, message_id, version, attempts, shown_sha256`,
        { bind: { now, claimedUntil, limit, provider: this.provider }, type: QueryTypes.SELECT, transaction },
      ),
    );
    return claimed
      .map((row) => ({
        id: Number(row.id),
        review_id: Number(row.review_id),
        organization_id: row.organization_id === null ? null : Number(row.organization_id),
        channel: row.channel,
        message_id: row.message_id,
        version: Number(row.version),
        attempts: Number(row.attempts),
        shown_sha256: row.shown_sha256,
      }))
      .sort((a, b) => a.id - b.id);
  }

  async nextDue(now: number): Promise<number | null> {
    // Another process's claim runs out when that process died: then this one takes the message over.
    const [row] = await this.db.sequelize.query<{ due: number | null }>(
      `SELECT MIN(CASE WHEN claimed_until >= $now THEN claimed_until ELSE next_attempt_at END) AS due
       FROM chat_messages WHERE provider = $provider AND status = 'active' AND synced_version < version`,
      { bind: { now, provider: this.provider }, type: QueryTypes.SELECT },
    );
    return row?.due === null || row?.due === undefined ? null : Number(row.due);
  }

  async releaseOrphanedClaims(): Promise<void> {
    if (this.db.sql.sharedByProcesses) return;
    await this.db.write((transaction) =>
      this.db.sequelize.query('UPDATE chat_messages SET claimed_until = NULL WHERE provider = $provider AND claimed_until IS NOT NULL', { bind: { provider: this.provider }, transaction }),
    );
  }

  async recordSynced(id: number, version: number, messageId: string, shownSha256: string, now: number): Promise<void> {
    // Due again at once if the review changed while it was being sent (version moved past what was sent).
    await this.db.write((transaction) =>
      this.db.sequelize.query(
        `UPDATE chat_messages SET message_id = $messageId, synced_version = CASE WHEN synced_version > $version THEN synced_version ELSE $version END,
         shown_sha256 = $shownSha256, attempts = 0, last_error = NULL, claimed_until = NULL, next_attempt_at = $now, updated_at = $now WHERE id = $id`,
        { bind: { id, version, messageId, shownSha256, now }, transaction },
      ),
    );
  }

  async recordFailure(id: number, error: string, nextAttemptAt: number | null, now: number): Promise<void> {
    await this.db.write((transaction) =>
      this.db.sequelize.query(
        `UPDATE chat_messages SET status = $status, attempts = attempts + 1, last_error = $error, next_attempt_at = $next, claimed_until = NULL, updated_at = $now WHERE id = $id`,
        { bind: { id, status: nextAttemptAt === null ? 'failed' : 'active', error: error.slice(0, MAX_ERROR), next: nextAttemptAt ?? now, now }, transaction },
      ),
    );
  }

  async find(reviewId: number): Promise<ChatMessageRef | null> {
    const [row] = await this.db.sequelize.query<{ channel: string; message_id: string | null }>(
      'SELECT channel, message_id FROM chat_messages WHERE review_id = $reviewId AND provider = $provider',
      { bind: { reviewId, provider: this.provider }, type: QueryTypes.SELECT },
    );
    return row?.message_id ? { channel: row.channel, message_id: row.message_id } : null;
  }
}
