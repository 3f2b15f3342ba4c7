import { type Request, Router } from 'express';
import type { ChatInstallations } from '../../domain/chat/installations';
import { invalidInput } from '../../domain/shared/errors';
import { principalOf } from '../auth';

/**
 * @openapi
 * components:
 *   schemas:
 *     SlackInstallation:
 *       type: object
 *       additionalProperties: false
 *       required: [provider, team, bot_user_id, scopes, channel_id, status, installed_at, updated_at]
 *       description: The organization's Slack workspace. Its bot token is stored encrypted and never shown.
 *       properties:
 *         provider: { type: string, enum: [slack] }
 *         team:
 *           type: object
 *           additionalProperties: false
 *           required: [id, name]
 *           properties:
 *             id: { type: string, maxLength: 32 }
 *             name: { type: string, nullable: true, maxLength: 200 }
 *         bot_user_id: { type: string, nullable: true, maxLength: 32 }
 *         scopes: { type: array, items: { type: string, maxLength: 100 } }
 *         channel_id: { type: string, nullable: true, maxLength: 64, description: The channel new reviews are posted to; null until an admin picks one. }
 *         status: { type: string, enum: [active, revoked], description: '`revoked`: the workspace uninstalled the app or revoked its token; install again.' }
 *         installed_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example: { provider: slack, team: { id: T0123ABCD, name: Acme }, bot_user_id: U0BOT1234, scopes: ['chat:write', 'im:write', 'users:read', 'users:read.email'], channel_id: C0REVIEWS, status: active, installed_at: '2026-11-26T10:00:00.000Z', updated_at: '2026-11-26T10:02:00.000Z' }
 *     SlackChannelChange:
 *       type: object
 *       additionalProperties: false
 *       required: [channel_id]
 *       properties:
 *         channel_id: { type: string, nullable: true, maxLength: 64, description: 'A channel id (C…, G…) the app was invited to; null posts nowhere.' }
 *       example: { channel_id: C0REVIEWS }
 */

/** The hosted edition's Slack install, for an organization's admins; the callback is Slack's redirect of the admin's browser. */
export function slackInstallRoutes(installations: ChatInstallations, consoleUrl: string): Router {
  const router = Router();

  /**
   * @openapi
   * /integrations/slack/oauth:
   *   post:
   *     operationId: startSlackInstall
   *     tags: [integrations]
   *     summary: Begin installing Slack for the organization (admin)
   *     description: >-
   *       Hosted edition only. Answers the address to send the admin to ("Add to Slack"): Slack's
   *       authorize page with the app's client id, its bot scopes, the callback, and a random
   *       `state` that only this organization and admin can complete, once, within 10 minutes.
   *       409 when the server has no Slack app credentials.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Where to send the admin.
   *         content:
   *           application/json:
   *             schema:
   *               type: object
   *               additionalProperties: false
   *               required: [authorize_url]
   *               properties:
   *                 authorize_url: { type: string, maxLength: 2000 }
   *             example: { authorize_url: 'https://slack.com/oauth/v2/authorize?client_id=1234.5678&scope=chat%3Awrite%2Cim%3Awrite%2Cusers%3Aread%2Cusers%3Aread.email&user_scope=&redirect_uri=https%3A%2F%2Freview.example.com%2Fapi%2Fintegrations%2Fslack%2Foauth%2Fcallback&state=q3N…' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '409':
   *         description: This server has no Slack app credentials.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Conflict, status: 409, detail: 'this server cannot install Slack: its operator has not set slack_client_id, slack_client_secret and slack_token_key' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/integrations/slack/oauth', async (_req, res) => {
    res.json(await installations.start(principalOf(res)));
  });

  /**
   * @openapi
   * /integrations/slack/oauth/callback:
   *   get:
   *     operationId: completeSlackInstall
   *     tags: [integrations]
   *     summary: Slack's redirect back after the admin authorized the app
   *     description: >-
   *       Hosted edition only. Public: the `state` is the credential. It is taken first (a replayed,
   *       foreign or expired one is 400 and nothing is stored), then the code is exchanged at
   *       `oauth.v2.access` with the client id and secret as HTTP Basic, the bot token is stored
   *       encrypted (AES-256-GCM), and the browser is sent on to the console's Slack page (a
   *       page that says so and moves on by itself).
   *     x-edition: hosted
   *     security: []
   *     parameters:
   *       - { in: query, name: code, required: false, schema: { type: string, maxLength: 500 } }
   *       - { in: query, name: state, required: true, schema: { type: string, maxLength: 200 } }
   *       - { in: query, name: error, required: false, schema: { type: string, maxLength: 200 }, description: Set by Slack when the admin cancelled. }
   *     responses:
   *       '200':
   *         description: Installed; a page that goes on to the console.
   *         content:
   *           text/html:
   *             schema: { type: string }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '502':
   *         description: Slack refused the code.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Bad Gateway, status: 502, detail: "Slack did not complete the install: Slack's oauth.v2.access answered invalid_code" }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/integrations/slack/oauth/callback', async (req: Request<Record<string, string>, unknown, unknown, { code?: string; state: string; error?: string }>, res) => {
    if (req.query.error !== undefined || !req.query.code) throw invalidInput('code', `is missing: the install was not authorized in Slack${req.query.error ? ` (${req.query.error})` : ''}`);
    await installations.complete(req.query.code, req.query.state);
    // A page rather than a 302: the API's answers are data, and its Content-Security-Policy lets a page move on without a script.
    const next = `${consoleUrl}/#/console/slack`.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`);
    res
      .status(200)
      .type('html')
      .send(`<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${next}"><title>Slack installed</title><p>Slack is installed. <a href="${next}">Continue to the console</a>.</p>`);
  });

  /**
   * @openapi
   * /integrations/slack:
   *   get:
   *     operationId: getSlackInstallation
   *     tags: [integrations]
   *     summary: The organization's Slack workspace, channel and status (admin)
   *     description: Hosted edition only. Never the token. 404 when Slack is not installed.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: The installation.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/SlackInstallation' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateSlackInstallation
   *     tags: [integrations]
   *     summary: Choose the channel new reviews are posted to (admin)
   *     description: Hosted edition only. Recorded in the audit log.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/SlackChannelChange' }
   *     responses:
   *       '200':
   *         description: The installation.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/SlackInstallation' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deleteSlackInstallation
   *     tags: [integrations]
   *     summary: Uninstall Slack (admin)
   *     description: Hosted edition only. Revokes the bot token at Slack (`auth.revoke`), deletes it here, and records it in the audit log.
   *     x-edition: hosted
   *     responses:
   *       '204': { description: Uninstalled. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/integrations/slack', async (_req, res) => {
    res.json(await installations.status(principalOf(res)));
  });

  router.patch('/integrations/slack', async (req: Request<Record<string, string>, unknown, { channel_id: string | null }>, res) => {
    res.json(await installations.setChannel(principalOf(res), req.body.channel_id));
  });

  router.delete('/integrations/slack', async (_req, res) => {
    await installations.uninstall(principalOf(res));
    res.status(204).end();
  });

  return router;
}
