import { type Request, Router } from 'express';
import type { AgentInput, AgentService } from '../../domain/organizations/agents';
import { principalOf } from '../auth';
import { pathInteger } from '../params';

/**
 * The agents an organization registers (hosted edition only: 404 in the self-hosted one).
 *
 * @openapi
 * components:
 *   schemas:
 *     AgentCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 200 }
 *         framework: { type: string, nullable: true, maxLength: 100 }
 *         description: { type: string, nullable: true, maxLength: 10000 }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *         metadata: { type: object, additionalProperties: true }
 *       example: { name: refund-bot, framework: langchain, description: Refunds lost parcels up to EUR 500., metadata: { team: support } }
 *     Agent:
 *       type: object
 *       required: [id, organization_id, name, framework, description, metadata, created_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         framework: { type: string, nullable: true }
 *         description: { type: string, nullable: true }
 *         metadata: { type: object, additionalProperties: true }
 *         created_at: { type: string, format: date-time }
 *       example: { id: 3, organization_id: 1, name: refund-bot, framework: langchain, description: Refunds lost parcels up to EUR 500., metadata: { team: support }, created_at: '2026-11-24T09:00:00.000Z' }
 *     AgentList:
 *       type: object
 *       required: [agents, count]
 *       properties:
 *         agents:
 *           type: array
 *           items: { $ref: '#/components/schemas/Agent' }
 *         count: { type: integer }
 */
export function agentRoutes(agents: AgentService): Router {
  const router = Router();

  /**
   * @openapi
   * /agents:
   *   post:
   *     operationId: createAgent
   *     tags: [organizations]
   *     summary: Register an agent (admin key)
   *     description: >-
   *       Hosted edition only. A review's `agent_id` must then name one of the organization's
   *       agents (404 otherwise), and an `agent` key may belong to one (`agent_id` on
   *       `POST /organizations/{org_id}/api-keys`).
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/AgentCreate' }
   *     responses:
   *       '201':
   *         description: The agent.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Agent' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listAgents
   *     tags: [organizations]
   *     summary: The organization's agents, oldest first
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every agent of the organization.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/AgentList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/agents', async (req: Request<unknown, unknown, AgentInput>, res) => {
    res.status(201).json(await agents.create(principalOf(res), req.body));
  });

  router.get('/agents', async (_req, res) => {
    res.json(await agents.list(principalOf(res)));
  });

  /**
   * @openapi
   * /agents/{agent_id}:
   *   get:
   *     operationId: getAgent
   *     tags: [organizations]
   *     summary: One agent of the organization
   *     description: Hosted edition only. Another organization's agent is a 404.
   *     x-edition: hosted
   *     parameters:
   *       - name: agent_id
   *         in: path
   *         required: true
   *         schema: { type: integer, minimum: 1 }
   *     responses:
   *       '200':
   *         description: The agent.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Agent' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/agents/:agent_id', async (req, res) => {
    res.json(await agents.get(principalOf(res), pathInteger(req, 'agent_id')));
  });

  return router;
}
