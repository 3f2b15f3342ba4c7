import { Router } from 'express';
import type { EventStreams } from '../event-stream';

export function eventRoutes(streams: EventStreams): Router {
  const router = Router();

  /**
   * @openapi
   * /events:
   *   get:
   *     tags: [events]
   *     summary: Live events (Server-Sent Events)
   *     description: >-
   *       A `text/event-stream` of `review.created`, `review.decided` (the review with its
   *       decision), `feedback.created`, `attachment.created` and `attachment.deleted`
   *       (`{id, review_id}`); each `data:` line is one JSON object. A comment line is sent
   *       every 15 s so proxies keep the stream open. Events are not replayed: a client that
   *       reconnects re-reads what it shows.
   *     responses:
   *       '200':
   *         description: The stream; it stays open.
   *         content:
   *           text/event-stream:
   *             schema: { type: string }
   *             example: "event: review.created\ndata: {\"id\":42,\"task_type\":\"refund\",\"status\":\"pending\"}\n\n"
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   */
  router.get('/events', (req, res) => streams.attach(req, res));
  return router;
}
