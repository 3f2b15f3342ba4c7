import { type Request, Router } from 'express';
import type { WebhookChanges, WebhookInput, WebhookService } from '../../domain/webhooks/webhooks';
import { principalOf } from '../auth';
import { pathInteger, queryInteger } from '../params';

/**
 * An organization's webhook endpoints (hosted edition only: 404 in the self-hosted one).
 * Deliveries follow Standard Webhooks: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
 *
 * @openapi
 * components:
 *   parameters:
 *     WebhookId:
 *       name: webhook_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   schemas:
 *     WebhookEvents:
 *       type: array
 *       minItems: 1
 *       items: { type: string, enum: [review.created, review.decided, review.expired, review.vote, feedback.created, attachment.created, attachment.deleted] }
 *       description: The events it receives (default all); each delivery's body is `{type, timestamp, data}`, data being the record `/events` carries.
 *     WebhookCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [url]
 *       properties:
 *         url: { type: string, minLength: 1, maxLength: 2048, description: 'https:// (http:// where webhook_allow_http is set); loopback and private addresses are refused at delivery unless webhook_allow_private_targets is set.' }
 *         events: { $ref: '#/components/schemas/WebhookEvents' }
 *         description: { type: string, nullable: true, maxLength: 500 }
 *         is_active: { type: boolean, default: true }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *       example: { url: 'https://hooks.example.com/greenlight', events: [review.decided, review.expired], description: Ticketing system }
 *     WebhookUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       properties:
 *         url: { type: string, minLength: 1, maxLength: 2048 }
 *         events: { $ref: '#/components/schemas/WebhookEvents' }
 *         description: { type: string, nullable: true, maxLength: 500 }
 *         is_active: { type: boolean, description: 'true turns a disabled endpoint back on.' }
 *       example: { is_active: true }
 *     Webhook:
 *       type: object
 *       required: [id, organization_id, url, events, description, is_active, disabled_reason, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         url: { type: string }
 *         events: { type: array, items: { type: string } }
 *         description: { type: string, nullable: true }
 *         is_active: { type: boolean }
 *         disabled_reason: { type: string, nullable: true, description: 'Why delivery stopped (a 410, the retry schedule spent).' }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example: { id: 2, organization_id: 1, url: 'https://hooks.example.com/greenlight', events: [review.decided], description: null, is_active: true, disabled_reason: null, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *     WebhookCreated:
 *       allOf:
 *         - { $ref: '#/components/schemas/Webhook' }
 *         - type: object
 *           required: [secret]
 *           properties:
 *             secret: { type: string, description: 'whsec_…, the signing secret: shown this once.' }
 *     WebhookList:
 *       type: object
 *       required: [webhooks, count]
 *       properties:
 *         webhooks: { type: array, items: { $ref: '#/components/schemas/Webhook' } }
 *         count: { type: integer }
 *     WebhookDelivery:
 *       type: object
 *       required: [id, webhook_id, message_id, event_type, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error, duration_ms, created_at]
 *       properties:
 *         id: { type: integer }
 *         webhook_id: { type: integer }
 *         message_id: { type: string, description: 'The webhook-id header, the same on every attempt.' }
 *         event_type: { type: string }
 *         status: { type: string, enum: [pending, delivered, failed] }
 *         attempts: { type: integer }
 *         next_attempt_at: { type: string, format: date-time, nullable: true }
 *         last_attempt_at: { type: string, format: date-time, nullable: true }
 *         last_status_code: { type: integer, nullable: true }
 *         last_error: { type: string, nullable: true }
 *         duration_ms: { type: integer, nullable: true }
 *         created_at: { type: string, format: date-time }
 *     WebhookDeliveryPage:
 *       type: object
 *       required: [deliveries, next_cursor]
 *       properties:
 *         deliveries: { type: array, items: { $ref: '#/components/schemas/WebhookDelivery' } }
 *         next_cursor: { type: integer, nullable: true }
 *       example:
 *         deliveries: [{ id: 7, webhook_id: 2, message_id: msg_812, event_type: review.decided, status: delivered, attempts: 1, next_attempt_at: null, last_attempt_at: '2026-11-24T09:05:01.000Z', last_status_code: 200, last_error: null, duration_ms: 42, created_at: '2026-11-24T09:05:00.000Z' }]
 *         next_cursor: null
 */
export function webhookRoutes(webhooks: WebhookService): Router {
  const router = Router();

  /**
   * @openapi
   * /webhooks:
   *   post:
   *     operationId: createWebhook
   *     tags: [webhooks]
   *     summary: Add a webhook endpoint (admin)
   *     description: >-
   *       Hosted edition only. The answer carries the signing secret, this once. An organization
   *       has at most `max_webhooks_per_organization` endpoints (default 50; 409 past that).
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/WebhookCreate' }
   *     responses:
   *       '201':
   *         description: The endpoint, with its secret.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/WebhookCreated' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The organization already has `max_webhooks_per_organization` endpoints.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: the organization already has the maximum of 50 webhook endpoints (max_webhooks_per_organization); delete one first }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listWebhooks
   *     tags: [webhooks]
   *     summary: The organization's webhook endpoints, without their secrets (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every endpoint, oldest first.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/WebhookList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/webhooks', async (req: Request<Record<string, string>, unknown, WebhookInput>, res) => {
    res.status(201).json(await webhooks.create(principalOf(res), req.body));
  });

  router.get('/webhooks', async (_req, res) => {
    res.json(await webhooks.list(principalOf(res)));
  });

  /**
   * @openapi
   * /webhooks/{webhook_id}:
   *   get:
   *     operationId: getWebhook
   *     tags: [webhooks]
   *     summary: One webhook endpoint (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WebhookId' }]
   *     responses:
   *       '200':
   *         description: The endpoint.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Webhook' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateWebhook
   *     tags: [webhooks]
   *     summary: Change a webhook endpoint, or turn it back on (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WebhookId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/WebhookUpdate' }
   *     responses:
   *       '200':
   *         description: The endpoint as changed.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Webhook' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deleteWebhook
   *     tags: [webhooks]
   *     summary: Delete a webhook endpoint and its deliveries (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WebhookId' }]
   *     responses:
   *       '204': { description: Deleted. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/webhooks/:webhook_id', async (req, res) => {
    res.json(await webhooks.get(principalOf(res), pathInteger(req, 'webhook_id')));
  });

  router.patch('/webhooks/:webhook_id', async (req: Request<{ webhook_id: string }, unknown, WebhookChanges>, res) => {
    res.json(await webhooks.update(principalOf(res), pathInteger(req, 'webhook_id'), req.body));
  });

  router.delete('/webhooks/:webhook_id', async (req, res) => {
    await webhooks.delete(principalOf(res), pathInteger(req, 'webhook_id'));
    res.status(204).end();
  });

  /**
   * @openapi
   * /webhooks/{webhook_id}/rotate-secret:
   *   post:
   *     operationId: rotateWebhookSecret
   *     tags: [webhooks]
   *     summary: A new signing secret (admin)
   *     description: >-
   *       Hosted edition only. The new secret is shown this once; for 24 hours deliveries carry
   *       a signature by each secret, so receivers switch without missing one.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WebhookId' }]
   *     responses:
   *       '201':
   *         description: The new secret.
   *         content:
   *           application/json:
   *             schema:
   *               type: object
   *               required: [secret, previous_secret_expires_at]
   *               properties:
   *                 secret: { type: string }
   *                 previous_secret_expires_at: { type: string, format: date-time }
   *             example: { secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, previous_secret_expires_at: '2026-11-25T09:00:00.000Z' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/webhooks/:webhook_id/rotate-secret', async (req, res) => {
    res.status(201).json(await webhooks.rotateSecret(principalOf(res), pathInteger(req, 'webhook_id')));
  });

  /**
   * @openapi
   * /webhooks/{webhook_id}/test:
   *   post:
   *     operationId: testWebhook
   *     tags: [webhooks]
   *     summary: Send a test event to this endpoint (admin)
   *     description: Hosted edition only. A `webhook.test` delivery, signed and retried like any other; 409 while the endpoint is disabled.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WebhookId' }]
   *     responses:
   *       '202':
   *         description: Queued; its delivery shows in the endpoint's deliveries.
   *         content:
   *           application/json:
   *             schema: { type: object, required: [message_id], properties: { message_id: { type: string } } }
   *             example: { message_id: msg_test_2b1f7c56-6d1e-4f0a-9d3c-0f5c2a9e4b11 }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The endpoint is disabled.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/webhooks/:webhook_id/test', async (req, res) => {
    res.status(202).json(await webhooks.sendTest(principalOf(res), pathInteger(req, 'webhook_id')));
  });

  /**
   * @openapi
   * /webhooks/{webhook_id}/deliveries:
   *   get:
   *     operationId: listWebhookDeliveries
   *     tags: [webhooks]
   *     summary: The endpoint's deliveries, newest first (admin)
   *     description: Hosted edition only. Status, attempts, the last answer's code and time, and when the next attempt is due.
   *     x-edition: hosted
   *     parameters:
   *       - { $ref: '#/components/parameters/WebhookId' }
   *       - { name: cursor, in: query, description: 'The `next_cursor` of the page before.', schema: { type: integer, minimum: 1 } }
   *       - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 200, default: 50 } }
   *     responses:
   *       '200':
   *         description: A page of deliveries.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/WebhookDeliveryPage' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/webhooks/:webhook_id/deliveries', async (req, res) => {
    res.json(await webhooks.deliveries(principalOf(res), pathInteger(req, 'webhook_id'), queryInteger(req, 'cursor', undefined) ?? null, queryInteger(req, 'limit', 50)));
  });

  /**
   * @openapi
   * /webhooks/{webhook_id}/deliveries/{delivery_id}/retry:
   *   post:
   *     operationId: retryWebhookDelivery
   *     tags: [webhooks]
   *     summary: Send a delivery again now (admin)
   *     description: Hosted edition only. Whatever became of it, it is due at once again.
   *     x-edition: hosted
   *     parameters:
   *       - { $ref: '#/components/parameters/WebhookId' }
   *       - { name: delivery_id, in: path, required: true, schema: { type: integer, minimum: 1 } }
   *     responses:
   *       '202': { description: Due again. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/webhooks/:webhook_id/deliveries/:delivery_id/retry', async (req, res) => {
    await webhooks.retry(principalOf(res), pathInteger(req, 'webhook_id'), pathInteger(req, 'delivery_id'));
    res.status(202).end();
  });

  return router;
}
