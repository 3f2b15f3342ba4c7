import express, { type Request, type Response, Router } from 'express';
import type { Log } from '../../domain/shared/unit-of-work';
import type { SlackEventHandler } from '../../integrations/slack/events';
import type { SlackAnswerer } from '../../integrations/slack/inbound';
import { verifySlackSignature } from '../../integrations/slack/signature';
import { sendProblem } from '../problems';


export interface SlackHttpOptions {
  /** `slack_signing_secret`: empty refuses every request. */
  signingSecret: string;
  /** Clicks and forms; null when Slack is not set up here. */
  inbound: SlackAnswerer | null;
  onEvent: SlackEventHandler;
  log: Log;
  clock?: () => number;
}

/** Larger than any interaction payload Slack sends (the message's blocks come with a click). */
const BODY_LIMIT = '1mb';

/**
 * Slack's requests: public, for Slack signs them instead of sending a key. Mounted before the
 * JSON-only rule (a signed urlencoded form cannot be forged by another site) and read raw, for
 * the signature covers the body's bytes exactly.
 */
export function slackRoutes(options: SlackHttpOptions): Router {
  const router = Router();
  const clock = options.clock ?? Date.now;
  const raw = express.raw({ type: () => true, limit: BODY_LIMIT, inflate: false });

  /** The body, once Slack's signature over it holds; otherwise a 401 has been sent. */
  function signedBody(req: Request, res: Response): string | null {
    // Slack sends no query: one is refused as everywhere else in the API, before anything is read.
    const [unknown] = Object.keys(req.query);
    if (unknown !== undefined) {
      sendProblem(res, 400, `${unknown} is not a known query parameter`);
      return null;
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const check = verifySlackSignature(options.signingSecret, { timestamp: req.get('x-slack-request-timestamp'), signature: req.get('x-slack-signature') }, body, clock());
    if (!check.ok) {
      options.log.info('refused a request not signed by Slack', { path: req.path, reason: check.reason });
      sendProblem(res, 401, 'this endpoint takes requests signed by Slack with the signing secret of the app (slack_signing_secret)');
      return null;
    }
    return body.toString('utf8');
  }

  /**
   * @openapi
   * /integrations/slack/interactions:
   *   post:
   *     operationId: postSlackInteraction
   *     tags: [integrations]
   *     summary: Slack's interactivity requests (a button clicked, a form submitted)
   *     description: >-
   *       Slack's Request URL for interactivity. Public, for Slack signs each request instead:
   *       `X-Slack-Signature` must be `v0=` and the hex HMAC-SHA256, with `slack_signing_secret`,
   *       of `v0:{X-Slack-Request-Timestamp}:{raw body}`, the timestamp at most 300 s away;
   *       anything else is 401 and changes nothing. Answered within Slack's 3 s: a click at once
   *       (what it does follows: a form opens, the review is decided, or an ephemeral message says
   *       why not), a form once decided, or with `response_action: errors` naming what to fix.
   *     security: []
   *     requestBody:
   *       required: true
   *       content:
   *         application/x-www-form-urlencoded:
   *           schema:
   *             type: object
   *             required: [payload]
   *             properties:
   *               payload: { type: string, maxLength: 1000000, description: "Slack's interaction payload, JSON (`block_actions`, `view_submission`)." }
   *     parameters:
   *       - { in: header, name: X-Slack-Request-Timestamp, required: true, schema: { type: string, maxLength: 12 }, description: Seconds since 1970 when Slack sent it. }
   *       - { in: header, name: X-Slack-Signature, required: true, schema: { type: string, maxLength: 100 }, description: "`v0=` and the hex HMAC-SHA256." }
   *     responses:
   *       '200':
   *         description: Received. Empty, or for a form that cannot be decided as submitted, the errors to show in it.
   *         content:
   *           application/json:
   *             schema:
   *               type: object
   *               additionalProperties: false
   *               properties:
   *                 response_action: { type: string, enum: [errors] }
   *                 errors:
   *                   type: object
   *                   description: Per input of the form (`action`, `reason`), what is wrong with it.
   *                   additionalProperties: { type: string, maxLength: 2000 }
   *             example: { response_action: errors, errors: { action: 'Write the action to approve instead, or use Reject.' } }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401':
   *         description: Not signed by Slack with slack_signing_secret, or signed more than 300 s ago.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Unauthorized, status: 401, detail: this endpoint takes requests signed by Slack with the signing secret of the app (slack_signing_secret) }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   */
  router.post('/integrations/slack/interactions', raw, async (req, res) => {
    const body = signedBody(req, res);
    if (body === null) return;
    if (options.inbound === null) return sendProblem(res, 404, 'Slack is not set up on this server (slack_bot_token)');
    let payload: unknown;
    try {
      payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '');
    } catch {
      return sendProblem(res, 400, 'payload must be the JSON of an interaction, in a urlencoded form field');
    }
    const answer = await options.inbound.answer(payload);
    if (answer === null) res.status(200).end();
    else res.status(200).json(answer);
  });

  /**
   * @openapi
   * /integrations/slack/events:
   *   post:
   *     operationId: postSlackEvent
   *     tags: [integrations]
   *     summary: Slack's Events API deliveries
   *     description: >-
   *       Slack's Request URL for events, signed as the interactions are (401 otherwise).
   *       `url_verification` is answered with its challenge; `app_uninstalled` and
   *       `tokens_revoked` mark the workspace's integration revoked; other events are received
   *       and ignored.
   *     security: []
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema:
   *             type: object
   *             additionalProperties: true
   *             example: { type: url_verification, token: Jhj5dZrVaK7ZwHHjRyZWjbDl, challenge: 3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P }
   *     parameters:
   *       - { in: header, name: X-Slack-Request-Timestamp, required: true, schema: { type: string, maxLength: 12 }, description: Seconds since 1970 when Slack sent it. }
   *       - { in: header, name: X-Slack-Signature, required: true, schema: { type: string, maxLength: 100 }, description: "`v0=` and the hex HMAC-SHA256." }
   *     responses:
   *       '200':
   *         description: Received; for `url_verification`, its challenge.
   *         content:
   *           application/json:
   *             schema:
   *               type: object
   *               properties:
   *                 challenge: { type: string, maxLength: 1000 }
   *             example: { challenge: 3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401':
   *         description: Not signed by Slack with slack_signing_secret, or signed more than 300 s ago.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Unauthorized, status: 401, detail: this endpoint takes requests signed by Slack with the signing secret of the app (slack_signing_secret) }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   */
  router.post('/integrations/slack/events', raw, async (req, res) => {
    const body = signedBody(req, res);
    if (body === null) return;
    let delivery: Record<string, unknown>;
    try {
      delivery = JSON.parse(body) as Record<string, unknown>;
      if (typeof delivery !== 'object' || delivery === null || Array.isArray(delivery)) throw new Error('not an object');
    } catch {
      return sendProblem(res, 400, 'the body must be a JSON object');
    }
    if (delivery.type === 'url_verification') return res.json({ challenge: String(delivery.challenge ?? '') });
    const event = typeof delivery.event === 'object' && delivery.event !== null ? (delivery.event as Record<string, unknown>) : {};
    if (delivery.type === 'event_callback' && typeof event.type === 'string') {
      await options.onEvent({ type: event.type, team_id: typeof delivery.team_id === 'string' ? delivery.team_id : null, payload: event });
    }
    res.status(200).end();
  });

  return router;
}
