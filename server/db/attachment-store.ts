import type { Transaction } from 'sequelize';
import type { AttachmentRow, Models, ReviewRow } from './models';
import { reviewPartsWhere, reviewsWhere } from './scope';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { AttachmentDeletion, AttachmentInsert, AttachmentRepository, AttachmentRules, NewAttachment, StoredAttachment } from '../domain/reviews/ports';
import type { Scope } from '../domain/shared/principal';
import type { Tx } from '../domain/shared/unit-of-work';
import type { AttachmentRecord } from '../domain/reviews/records';

export function toAttachmentRecord(row: AttachmentRow): AttachmentRecord {
  return {
    id: row.id,
    review_id: row.review_id,
    file_name: row.file_name,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256,
    description: row.description,
    created_at: isoTime(row.created_at),
  };
}

function stored(row: AttachmentRow): StoredAttachment {
  return { attachment: toAttachmentRecord(row), storageKey: row.storage_key };
}

type LockedReview = Pick<ReviewRow, 'id' | 'organization_id' | 'agent_id' | 'status'>;

export class AttachmentStore implements AttachmentRepository {
  constructor(private readonly models: Models) {}

  /** Every stored attachment's storage key (for the start-up sweep of unreferenced files). */
  async storageKeys(): Promise<Set<string>> {
    const rows = (await this.models.Attachment.findAll({ attributes: ['storage_key'], raw: true })) as unknown as Array<{ storage_key: string }>;
    return new Set(rows.map((row) => row.storage_key));
  }

  async countFor(scope: Scope, reviewId: number): Promise<number> {
    return this.models.Attachment.count({ where: { review_id: reviewId, ...reviewPartsWhere(scope) } });
  }

  async insert(
    tx: Tx,
    scope: Scope,
    reviewId: number,
    attachment: NewAttachment,
    rules: AttachmentRules & { maxPerReview: number },
    now: number,
    place: () => Promise<string>,
  ): Promise<AttachmentInsert> {
    const transaction = transactionOf(tx);
    const review = await this.lockReview(scope, reviewId, transaction);
    if (!review) return { outcome: 'review_not_found' };
    if (rules.pendingOnly && review.status !== 'pending') return { outcome: 'review_decided', review_id: review.id, status: review.status };
    const count = await this.models.Attachment.count({ where: { review_id: reviewId }, transaction });
    if (count >= rules.maxPerReview) return { outcome: 'limit_reached' };
    const storageKey = await place();
    const row = await this.models.Attachment.create(
      { ...attachment, review_id: reviewId, organization_id: review.organization_id, storage_key: storageKey, created_at: now },
      { transaction },
    );
    return { outcome: 'inserted', attachment: toAttachmentRecord(row.get({ plain: true })), storageKey, review };
  }

  async findById(scope: Scope, id: number): Promise<StoredAttachment | null> {
    const row = (await this.models.Attachment.findOne({ where: { id, ...reviewPartsWhere(scope) }, raw: true })) as AttachmentRow | null;
    return row ? stored(row) : null;
  }

  async listFor(scope: Scope, reviewId: number): Promise<AttachmentRecord[]> {
    const rows = await this.models.Attachment.findAll({ where: { review_id: reviewId, ...reviewPartsWhere(scope) }, order: [['id', 'ASC']], raw: true });
    return (rows as unknown as AttachmentRow[]).map(toAttachmentRecord);
  }

  async delete(tx: Tx, scope: Scope, id: number, rules: AttachmentRules): Promise<AttachmentDeletion> {
    const transaction = transactionOf(tx);
    const row = (await this.models.Attachment.findOne({ where: { id, ...reviewPartsWhere(scope) }, raw: true, transaction })) as AttachmentRow | null;
    const review = row && (await this.lockReview(scope, row.review_id, transaction));
    if (!row || !review) return { outcome: 'not_found' };
    if (rules.pendingOnly && review.status !== 'pending') return { outcome: 'review_decided', review_id: review.id, status: review.status };
    // A deletion racing this one took the row while this one waited for the review's lock.
    if ((await this.models.Attachment.destroy({ where: { id }, transaction })) === 0) return { outcome: 'not_found' };
    return { outcome: 'deleted', stored: stored(row), review };
  }

  /**
   * The review's row, locked until the transaction ends (PostgreSQL; SQLite's writes take turns
   * anyway): uploads and deletions take turns with each other and with the decision, which
   * updates the same row.
   */
  private async lockReview(scope: Scope, reviewId: number, transaction: Transaction): Promise<LockedReview | null> {
    return (await this.models.Review.findOne({
      where: { id: reviewId, ...reviewsWhere(scope) },
      attributes: ['id', 'organization_id', 'agent_id', 'status'],
      raw: true,
      transaction,
      lock: true,
    })) as LockedReview | null;
  }
}
