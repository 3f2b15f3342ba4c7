import { principalOf } from '../auth';
import { Router, type Request } from 'express';
import { pathInteger } from '../params';
import type { FeedbackService } from '../../domain/reviews/feedback';
import type { FeedbackInput } from '../../domain/reviews/records';

export function feedbackRoutes(feedback: FeedbackService): Router {
  const router = Router();

  /**
   * @openapi
   * /reviews/{review_id}/feedback:
   *   post:
   *     operationId: addFeedback
   *     tags: [feedback]
   *     summary: Leave feedback on a review
   *     description: >-
   *       A rating (1–5), a comment, or both. A review collects any number of feedback entries,
   *       pending or decided.
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/FeedbackCreate' }
   *     responses:
   *       '201':
   *         description: The stored feedback.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Feedback' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listFeedback
   *     tags: [feedback]
   *     summary: The feedback left on a review, oldest first
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     responses:
   *       '200':
   *         description: Every feedback entry of the review.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/FeedbackList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/reviews/:review_id/feedback', async (req: Request<{ review_id: string }, unknown, FeedbackInput>, res) => {
    res.status(201).json(await feedback.add(principalOf(res), pathInteger(req, 'review_id'), req.body));
  });

  router.get('/reviews/:review_id/feedback', async (req, res) => {
    res.json(await feedback.list(principalOf(res).scope, pathInteger(req, 'review_id')));
  });

  return router;
}
