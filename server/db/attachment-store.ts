import type { Database } from './connection';
import type { AttachmentRow, Models, ReviewRow } from './models';
import { isoTime } from './time';
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

export interface NewAttachment {
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  description: string | null;
}

export type InsertOutcome =
  | { outcome: 'inserted'; row: AttachmentRow }
  | { outcome: 'review_not_found' }
  | { outcome: 'limit_reached' };

export class AttachmentStore {
  constructor(
    private readonly db: Database,
    private readonly models: Models,
  ) {}

  /** Every stored attachment's storage key (for the start-up sweep of unreferenced files). */
  async storageKeys(): Promise<Set<string>> {
    const rows = (await this.models.Attachment.findAll({ attributes: ['storage_key'], raw: true })) as unknown as Array<{ storage_key: string }>;
    return new Set(rows.map((row) => row.storage_key));
  }

  async countFor(reviewId: number): Promise<number> {
    return this.models.Attachment.count({ where: { review_id: reviewId } });
  }

  /**
   * Checks the review and the per-review limit, lets `place` put the bytes where they belong
   * and records the row — all inside one write transaction, so two uploads racing for the
   * last free place cannot both win.
   */
  insert(reviewId: number, attachment: NewAttachment, maxPerReview: number, now: number, place: () => Promise<string>): Promise<InsertOutcome> {
    return this.db.write(async (transaction) => {
      const review = (await this.models.Review.findByPk(reviewId, { attributes: ['organization_id'], raw: true, transaction })) as
        | Pick<ReviewRow, 'organization_id'>
        | null;
      if (!review) return { outcome: 'review_not_found' };
      const count = await this.models.Attachment.count({ where: { review_id: reviewId }, transaction });
      if (count >= maxPerReview) return { outcome: 'limit_reached' };
      const storage_key = await place();
      const row = await this.models.Attachment.create(
        { ...attachment, review_id: reviewId, organization_id: review.organization_id, storage_key, created_at: now },
        { transaction },
      );
      return { outcome: 'inserted', row: row.get({ plain: true }) };
    });
  }

  async findById(id: number): Promise<AttachmentRow | null> {
    return (await this.models.Attachment.findByPk(id, { raw: true })) as AttachmentRow | null;
  }

  async listFor(reviewId: number): Promise<AttachmentRecord[]> {
    const rows = await this.models.Attachment.findAll({ where: { review_id: reviewId }, order: [['id', 'ASC']], raw: true });
    return (rows as unknown as AttachmentRow[]).map(toAttachmentRecord);
  }

  /** Deletes the row; returns it so the caller can remove the bytes after the commit. */
  delete(id: number): Promise<AttachmentRow | null> {
    return this.db.write(async (transaction) => {
      const row = (await this.models.Attachment.findByPk(id, { raw: true, transaction })) as AttachmentRow | null;
      if (row) await this.models.Attachment.destroy({ where: { id }, transaction });
      return row;
    });
  }
}
