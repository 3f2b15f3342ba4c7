import type { AttachmentRow, Models, ReviewRow } from './models';
import { scopeWhere } from './scope';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { AttachmentInsert, AttachmentRepository, NewAttachment, Scope, StoredAttachment, Tx } from '../domain/ports';
import type { AttachmentRecord } from '../domain/records';

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
  return { attachment: toAttachmentRecord(row), storageKey: row.storage_key, organization_id: row.organization_id };
}

export class AttachmentStore implements AttachmentRepository {
  constructor(private readonly models: Models) {}

  /** Every stored attachment's storage key (for the start-up sweep of unreferenced files). */
  async storageKeys(): Promise<Set<string>> {
    const rows = (await this.models.Attachment.findAll({ attributes: ['storage_key'], raw: true })) as unknown as Array<{ storage_key: string }>;
    return new Set(rows.map((row) => row.storage_key));
  }

  async countFor(scope: Scope, reviewId: number): Promise<number> {
    return this.models.Attachment.count({ where: { review_id: reviewId, ...scopeWhere(scope) } });
  }

  async insert(tx: Tx, scope: Scope, reviewId: number, attachment: NewAttachment, maxPerReview: number, now: number, place: () => Promise<string>): Promise<AttachmentInsert> {
    const transaction = transactionOf(tx);
    // The review's row locked (PostgreSQL; SQLite's writes take turns anyway): racing uploads count one after another.
    const review = (await this.models.Review.findOne({
      where: { id: reviewId, ...scopeWhere(scope) },
      attributes: ['organization_id'],
      raw: true,
      transaction,
      lock: true,
    })) as Pick<ReviewRow, 'organization_id'> | null;
    if (!review) return { outcome: 'review_not_found' };
    const count = await this.models.Attachment.count({ where: { review_id: reviewId }, transaction });
    if (count >= maxPerReview) return { outcome: 'limit_reached' };
    const storageKey = await place();
    const row = await this.models.Attachment.create(
      { ...attachment, review_id: reviewId, organization_id: review.organization_id, storage_key: storageKey, created_at: now },
      { transaction },
    );
    return { outcome: 'inserted', attachment: toAttachmentRecord(row.get({ plain: true })), storageKey, organization_id: review.organization_id };
  }

  async findById(scope: Scope, id: number): Promise<StoredAttachment | null> {
    const row = (await this.models.Attachment.findOne({ where: { id, ...scopeWhere(scope) }, raw: true })) as AttachmentRow | null;
    return row ? stored(row) : null;
  }

  async listFor(scope: Scope, reviewId: number): Promise<AttachmentRecord[]> {
    const rows = await this.models.Attachment.findAll({ where: { review_id: reviewId, ...scopeWhere(scope) }, order: [['id', 'ASC']], raw: true });
    return (rows as unknown as AttachmentRow[]).map(toAttachmentRecord);
  }

  async delete(tx: Tx, scope: Scope, id: number): Promise<StoredAttachment | null> {
    const transaction = transactionOf(tx);
    const row = (await this.models.Attachment.findOne({ where: { id, ...scopeWhere(scope) }, raw: true, transaction })) as AttachmentRow | null;
    if (row) await this.models.Attachment.destroy({ where: { id }, transaction });
    return row ? stored(row) : null;
  }
}
