import { type Request, Router } from 'express';
import type { ApiKeyInput, OrganizationInput, OrganizationService } from '../../domain/organizations/organizations';
import { principalOf } from '../auth';
import { pathInteger } from '../params';

/**
 * The hosted edition's organizations and API keys. Mounted only in that edition: in the
 * self-hosted edition these paths answer 404.
 *
 * @openapi
 * components:
 *   parameters:
 *     OrganizationId:
 *       name: org_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   schemas:
 *     OrganizationSettings:
 *       type: object
 *       additionalProperties: true
 *       description: >-
 *         The settings the service reads, described here; any other key is kept as it is, for
 *         the organization's own use.
 *       properties:
 *         require_two_approvals:
 *           type: boolean
 *           description: >-
 *             A review that no workflow governs needs the approvals of two different people
 *             (admins or reviewers) before it is approved. Absent: false.
 *       example: { require_two_approvals: true }
 *     OrganizationCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         settings: { $ref: '#/components/schemas/OrganizationSettings' }
 *       example: { name: Acme Support }
 *     OrganizationUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       description: '`settings` replaces the settings as a whole: send the keys to keep with the ones that change.'
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         settings: { $ref: '#/components/schemas/OrganizationSettings' }
 *       example: { settings: { require_two_approvals: false } }
 *     Organization:
 *       type: object
 *       required: [id, name, settings, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         name: { type: string }
 *         settings: { $ref: '#/components/schemas/OrganizationSettings' }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example: { id: 1, name: Acme Support, settings: {}, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *     ApiKeyCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name, scope]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         scope:
 *           type: string
 *           enum: [admin, agent]
 *           description: >-
 *             `admin`: everything in the organization. `agent`: create and read reviews,
 *             attachments, feedback and decisions, but never decide, and add or delete a
 *             review's attachments only while it is pending.
 *         agent_id:
 *           type: integer
 *           nullable: true
 *           description: >-
 *             For an `agent` key: the registered agent (`POST /agents`) it belongs to. Every
 *             review the key files is then that agent's, and the key reaches that agent's
 *             reviews alone (their feedback, attachments, decisions and events): another
 *             agent's review is a 404.
 *       example: { name: Refund agent, scope: agent }
 *     ApiKey:
 *       type: object
 *       required: [id, organization_id, name, prefix, scope, agent_id, created_at, last_used_at, revoked_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         prefix: { type: string, description: "The key's first characters, to tell keys apart." }
 *         scope: { type: string, enum: [admin, agent] }
 *         agent_id: { type: integer, nullable: true }
 *         created_at: { type: string, format: date-time }
 *         last_used_at: { type: string, format: date-time, nullable: true, description: 'Kept to the minute.' }
 *         revoked_at: { type: string, format: date-time, nullable: true }
 *       example: { id: 7, organization_id: 1, name: Refund agent, prefix: gl_Xk3f9a, scope: agent, agent_id: null, created_at: '2026-11-24T09:00:00.000Z', last_used_at: null, revoked_at: null }
 *     ApiKeyCreated:
 *       allOf:
 *         - { $ref: '#/components/schemas/ApiKey' }
 *         - type: object
 *           required: [key]
 *           properties:
 *             key: { type: string, description: 'The key itself. Shown this once: only its hash is kept.' }
 *     OrganizationCreated:
 *       type: object
 *       required: [organization, api_key]
 *       properties:
 *         organization: { $ref: '#/components/schemas/Organization' }
 *         api_key: { $ref: '#/components/schemas/ApiKeyCreated' }
 *       example:
 *         organization: { id: 1, name: Acme Support, settings: {}, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *         api_key:
 *           { id: 1, organization_id: 1, name: First admin key, prefix: gl_ZuUIiC, scope: admin, agent_id: null, created_at: '2026-11-24T09:00:00.000Z', last_used_at: null, revoked_at: null, key: gl_ZuUIiCn2QJsNFlDli1ExmhuukM9RgFWSjqu0uDFIZuE }
 *     ApiKeyList:
 *       type: object
 *       required: [api_keys, count]
 *       properties:
 *         api_keys:
 *           type: array
 *           items: { $ref: '#/components/schemas/ApiKey' }
 *         count: { type: integer }
 */
export function organizationRoutes(organizations: OrganizationService): Router {
  const router = Router();

  /**
   * @openapi
   * /organizations:
   *   post:
   *     operationId: createOrganization
   *     tags: [organizations]
   *     summary: Create an organization and its first admin key (operator key only)
   *     description: >-
   *       Hosted edition only (404 in the self-hosted edition). Needs the operator key
   *       (`operator_key`); any other key gets 403. The answer carries the organization's first
   *       `admin` API key, shown this once.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/OrganizationCreate' }
   *     responses:
   *       '201':
   *         description: The organization and its first admin key.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/OrganizationCreated' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/organizations', async (req: Request<unknown, unknown, OrganizationInput>, res) => {
    res.status(201).json(await organizations.create(principalOf(res), req.body));
  });

  /**
   * @openapi
   * /organizations/{org_id}:
   *   get:
   *     operationId: getOrganization
   *     tags: [organizations]
   *     summary: The caller's organization (admin key)
   *     description: Hosted edition only. Another organization's id is a 404; an agent key gets 403.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/OrganizationId' }]
   *     responses:
   *       '200':
   *         description: The organization.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Organization' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateOrganization
   *     tags: [organizations]
   *     summary: Rename the organization or replace its settings (admin key)
   *     description: Hosted edition only. Another organization's id is a 404; an agent key gets 403.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/OrganizationId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/OrganizationUpdate' }
   *     responses:
   *       '200':
   *         description: The organization as it now is.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Organization' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/organizations/:org_id', async (req, res) => {
    res.json(await organizations.get(principalOf(res), pathInteger(req, 'org_id')));
  });

  router.patch('/organizations/:org_id', async (req: Request<{ org_id: string }, unknown, Partial<OrganizationInput>>, res) => {
    res.json(await organizations.update(principalOf(res), pathInteger(req, 'org_id'), req.body));
  });

  /**
   * @openapi
   * /organizations/{org_id}/api-keys:
   *   post:
   *     operationId: createApiKey
   *     tags: [organizations]
   *     summary: Create an API key (admin key)
   *     description: >-
   *       Hosted edition only. The key is in the answer this once; only its SHA-256 is kept.
   *       Keys start with `gl_`, so that secret scanners recognise a leaked one.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/OrganizationId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/ApiKeyCreate' }
   *     responses:
   *       '201':
   *         description: The key, with the key itself.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/ApiKeyCreated' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listApiKeys
   *     tags: [organizations]
   *     summary: The organization's API keys, revoked ones included (admin key)
   *     description: Hosted edition only. Never the keys themselves.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/OrganizationId' }]
   *     responses:
   *       '200':
   *         description: Every key of the organization, oldest first.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/ApiKeyList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/organizations/:org_id/api-keys', async (req: Request<{ org_id: string }, unknown, ApiKeyInput>, res) => {
    res.status(201).json(await organizations.createKey(principalOf(res), pathInteger(req, 'org_id'), req.body));
  });

  router.get('/organizations/:org_id/api-keys', async (req, res) => {
    res.json(await organizations.listKeys(principalOf(res), pathInteger(req, 'org_id')));
  });

  /**
   * @openapi
   * /api-keys/{api_key_id}:
   *   delete:
   *     operationId: revokeApiKey
   *     tags: [organizations]
   *     summary: Revoke an API key (admin key)
   *     description: >-
   *       Hosted edition only. The key fails from the next request on, in every API process.
   *       Revoking a revoked key changes nothing; another organization's key is a 404.
   *     x-edition: hosted
   *     parameters:
   *       - name: api_key_id
   *         in: path
   *         required: true
   *         schema: { type: integer, minimum: 1 }
   *     responses:
   *       '204': { description: Revoked. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.delete('/api-keys/:api_key_id', async (req, res) => {
    await organizations.revokeKey(principalOf(res), pathInteger(req, 'api_key_id'));
    res.status(204).end();
  });

  return router;
}
