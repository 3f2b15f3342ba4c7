import { Router } from 'express';
import { principalOf } from '../auth';
import type { EventStreams } from '../event-stream';

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
   *       A `text/event-stream` of `review.created`, `review.decided` (the review with its
   *       decision), `feedback.created`, `attachment.created` and `attachment.deleted`
   *       (`{id, review_id}`); each `data:` line is one JSON object, and each event has an `id:`
   *       that only grows. A client that reconnects with `Last-Event-ID` (as EventSource does)
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
   *         description: The stream; it stays open.
   *         content:
   *           text/event-stream:
   *             schema: { type: string }
   *             example: "id: 1042\nevent: review.created\ndata: {\"id\":42,\"task_type\":\"refund\",\"status\":\"pending\"}\n\n"
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/events', (req, res) => streams.attach(req, res, principalOf(res)));
  return router;
}
