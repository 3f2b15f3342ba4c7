import { Router } from 'express';
import { principalOf } from '../auth';
import type { EventStreams } from '../event-stream';

/**
 * @openapi
 * components:
 *   schemas:
 *     StreamEvent:
 *       description: >-
 *         One event of `GET /events`, as its lines carry it: `id:`, `event:` and `data:` (one line
 *         of JSON). `event` says what `data` is.
 *       allOf:
 *         - type: object
 *           required: [id]
 *           properties:
 *             id: { type: string, description: 'Grows with every event; sent back as `Last-Event-ID`, the stream resumes after it.' }
 *         - oneOf:
 *             - type: object
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [review.created] }
 *                 data: { $ref: '#/components/schemas/Review' }
 *             - type: object
 *               description: The review with its decision.
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [review.decided] }
 *                 data: { $ref: '#/components/schemas/Review' }
 *             - type: object
 *               description: A vote that did not yet decide the review (hosted edition); the review, still pending, with its workflow's progress.
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [review.vote] }
 *                 data: { $ref: '#/components/schemas/Review' }
 *             - type: object
 *               description: >-
 *                 An agent started or stopped waiting on a pending review, moving its
 *                 `waiting_until`; the review as it now reads. Its decision's `review.decided`
 *                 says for itself that nobody waits any longer.
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [review.waiting] }
 *                 data: { $ref: '#/components/schemas/Review' }
 *             - type: object
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [feedback.created] }
 *                 data: { $ref: '#/components/schemas/Feedback' }
 *             - type: object
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [attachment.created] }
 *                 data: { $ref: '#/components/schemas/Attachment' }
 *             - type: object
 *               required: [event, data]
 *               properties:
 *                 event: { type: string, enum: [attachment.deleted] }
 *                 data:
 *                   type: object
 *                   required: [id, review_id]
 *                   properties:
 *                     id: { type: integer }
 *                     review_id: { type: integer }
 */
export function eventRoutes(streams: EventStreams): Router {
  const router = Router();

  /**
   * @openapi
   * /events:
   *   get:
   *     operationId: streamEvents
   *     tags: [events]
   *     summary: Live events (Server-Sent Events)
   *     description: >-
   *       A `text/event-stream` of the events `StreamEvent` describes: each has an `id:` that only
   *       grows, an `event:` naming what happened and a `data:` line of JSON, the record as the
   *       API returns it. A client that reconnects with `Last-Event-ID` (as EventSource does)
   *       first gets the events it missed — kept a day, at most 1,000 — then the live ones.
   *       A comment line is sent every 15 s so proxies keep the stream open. Only the events of
   *       the caller's organization are sent. The stream ends when the API key it was opened
   *       with is revoked, or its person is deactivated or signs out.
   *     parameters:
   *       - name: Last-Event-ID
   *         in: header
   *         required: false
   *         description: The `id` of the last event received; the stream starts with the ones after it.
   *         schema: { type: string, maxLength: 32, example: '1042' }
   *     responses:
   *       '200':
   *         # The example is in the description: as the media type's `example` it would have to
   *         # be an array like the schema, which describes the events rather than the text.
   *         description: "The stream; it stays open. An event on the wire:\n\n```\nid: 1042\nevent: review.created\ndata: {\"id\":42,\"task_type\":\"refund\",\"status\":\"pending\"}\n```"
   *         content:
   *           text/event-stream:
   *             schema:
   *               type: array
   *               description: The stream, read as the events it carries, in order.
   *               items: { $ref: '#/components/schemas/StreamEvent' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/events', (req, res) => streams.attach(req, res, principalOf(res)));
  return router;
}
