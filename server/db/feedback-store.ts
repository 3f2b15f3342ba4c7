import type { FeedbackRow, Models } from './models';
import { reviewPartsWhere, reviewsWhere } from './scope';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { EventSubject } from '../domain/shared/events';
import type { FeedbackRepository } from '../domain/reviews/ports';
import type { Scope } from '../domain/shared/principal';
import type { Tx } from '../domain/shared/unit-of-work';
import type { FeedbackInput, FeedbackRecord } from '../domain/reviews/records';

function toFeedbackRecord(row: FeedbackRow): FeedbackRecord {
  return { id: row.id, review_id: row.review_id, rating: row.rating, comment: row.comment, created_at: isoTime(row.created_at) };
}

export class FeedbackStore implements FeedbackRepository {
  constructor(private readonly models: Models) {}

  async insert(tx: Tx, scope: Scope, reviewId: number, input: FeedbackInput, now: number): Promise<{ record: FeedbackRecord; review: EventSubject } | null> {
    const transaction = transactionOf(tx);
    const review = (await this.models.Review.findOne({
      where: { id: reviewId, ...reviewsWhere(scope) },
      attributes: ['id', 'organization_id', 'agent_id'],
      raw: true,
      transaction,
    })) as EventSubject | null;
    if (!review) return null;
    const row = await this.models.Feedback.create(
      { review_id: reviewId, organization_id: review.organization_id, rating: input.rating ?? null, comment: input.comment ?? null, created_at: now },
      { transaction },
    );
    return { record: toFeedbackRecord(row.get({ plain: true })), review };
  }

  async listFor(scope: Scope, reviewId: number): Promise<FeedbackRecord[]> {
    const rows = await this.models.Feedback.findAll({ where: { review_id: reviewId, ...reviewPartsWhere(scope) }, order: [['id', 'ASC']], raw: true });
    return (rows as unknown as FeedbackRow[]).map(toFeedbackRecord);
  }
}
