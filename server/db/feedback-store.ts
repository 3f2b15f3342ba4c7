import type { Database } from './connection';
import type { FeedbackRow, Models, ReviewRow } from './models';
import { isoTime } from './time';
import type { FeedbackInput, FeedbackRecord } from '../domain/records';

function toFeedbackRecord(row: FeedbackRow): FeedbackRecord {
  return { id: row.id, review_id: row.review_id, rating: row.rating, comment: row.comment, created_at: isoTime(row.created_at) };
}

export class FeedbackStore {
  constructor(
    private readonly db: Database,
    private readonly models: Models,
  ) {}

  /** Null when the review does not exist. */
  insert(reviewId: number, input: FeedbackInput, now: number): Promise<FeedbackRecord | null> {
    return this.db.write(async (transaction) => {
      const review = (await this.models.Review.findByPk(reviewId, { attributes: ['organization_id'], raw: true, transaction })) as
        | Pick<ReviewRow, 'organization_id'>
        | null;
      if (!review) return null;
      const row = await this.models.Feedback.create(
        {
          review_id: reviewId,
          organization_id: review.organization_id,
          rating: input.rating ?? null,
          comment: input.comment ?? null,
          created_at: now,
        },
        { transaction },
      );
      return toFeedbackRecord(row.get({ plain: true }));
    });
  }

  async listFor(reviewId: number): Promise<FeedbackRecord[]> {
    const rows = await this.models.Feedback.findAll({ where: { review_id: reviewId }, order: [['id', 'ASC']], raw: true });
    return (rows as unknown as FeedbackRow[]).map(toFeedbackRecord);
  }
}
