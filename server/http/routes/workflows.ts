import { type Request, Router } from 'express';
import type { WorkflowChanges, WorkflowInput, Workflows } from '../../domain/workflows/workflows';
import { principalOf } from '../auth';
import { pathInteger } from '../params';

/**
 * An organization's approval workflows (hosted edition only: 404 in the self-hosted one).
 *
 * @openapi
 * components:
 *   parameters:
 *     WorkflowId:
 *       name: workflow_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   schemas:
 *     WorkflowStage:
 *       type: object
 *       additionalProperties: false
 *       required: [name, approvers, required_approvals]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         approvers:
 *           type: object
 *           additionalProperties: false
 *           description: >-
 *             Who may vote in the stage, at least one of them: people and a team of the
 *             organization (404 otherwise), and roles. Only active reviewers and admins vote: a
 *             viewer or a deactivated person named in `user_ids` is a 422, and the viewers of a
 *             team never vote.
 *           properties:
 *             user_ids: { type: array, maxItems: 1000, items: { type: integer, minimum: 1 } }
 *             team_id: { type: integer, minimum: 1 }
 *             roles: { type: array, maxItems: 2, items: { type: string, enum: [admin, reviewer] } }
 *         required_approvals:
 *           type: integer
 *           minimum: 1
 *           maximum: 100
 *           description: At most the number of active reviewers and admins among the approvers (422 otherwise).
 *     WorkflowCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name, stages]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         stages: { type: array, minItems: 1, maxItems: 10, items: { $ref: '#/components/schemas/WorkflowStage' } }
 *         is_active: { type: boolean, default: true }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *       example:
 *         name: large refunds
 *         conditions: { task_type: refund, metadata.amount: { operator: '>', value: 1000 } }
 *         stages:
 *           - { name: finance, approvers: { team_id: 2 }, required_approvals: 1 }
 *           - { name: manager, approvers: { roles: [admin] }, required_approvals: 1 }
 *     WorkflowUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         stages: { type: array, minItems: 1, maxItems: 10, items: { $ref: '#/components/schemas/WorkflowStage' } }
 *         is_active: { type: boolean }
 *       example: { is_active: false }
 *     Workflow:
 *       type: object
 *       required: [id, organization_id, name, conditions, stages, is_active, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         stages: { type: array, items: { $ref: '#/components/schemas/WorkflowStage' } }
 *         is_active: { type: boolean }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *       example:
 *         id: 3
 *         organization_id: 1
 *         name: large refunds
 *         conditions: { task_type: refund, metadata.amount: { operator: '>', value: 1000 } }
 *         stages:
 *           - { name: finance, approvers: { team_id: 2 }, required_approvals: 1 }
 *           - { name: manager, approvers: { roles: [admin] }, required_approvals: 1 }
 *         is_active: true
 *         created_at: '2026-11-24T09:00:00.000Z'
 *         updated_at: '2026-11-24T09:00:00.000Z'
 *     WorkflowList:
 *       type: object
 *       required: [workflows, count]
 *       properties:
 *         workflows: { type: array, items: { $ref: '#/components/schemas/Workflow' } }
 *         count: { type: integer }
 */
export function workflowRoutes(workflows: Workflows): Router {
  const router = Router();

  /**
   * @openapi
   * /workflows:
   *   post:
   *     operationId: createWorkflow
   *     tags: [routing]
   *     summary: Add an approval workflow (admin)
   *     description: >-
   *       Hosted edition only. A new review is governed by the first active workflow (oldest
   *       first) whose conditions hold, else by the organization's `require_two_approvals`
   *       setting; its stages vote in order. A stage's approvers must be able to decide, and
   *       number at least its `required_approvals` (422 otherwise).
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/WorkflowCreate' }
   *     responses:
   *       '201':
   *         description: The workflow.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Workflow' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '422': { $ref: '#/components/responses/Unworkable' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listWorkflows
   *     tags: [routing]
   *     summary: The organization's approval workflows, oldest first (admin)
   *     description: Hosted edition only.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every workflow of the organization.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/WorkflowList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/workflows', async (req: Request<Record<string, string>, unknown, WorkflowInput>, res) => {
    res.status(201).json(await workflows.create(principalOf(res), req.body));
  });

  router.get('/workflows', async (_req, res) => {
    res.json(await workflows.list(principalOf(res)));
  });

  /**
   * @openapi
   * /workflows/{workflow_id}:
   *   get:
   *     operationId: getWorkflow
   *     tags: [routing]
   *     summary: One approval workflow (admin)
   *     description: Hosted edition only. Another organization's workflow is a 404.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WorkflowId' }]
   *     responses:
   *       '200':
   *         description: The workflow.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Workflow' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateWorkflow
   *     tags: [routing]
   *     summary: Change an approval workflow (admin)
   *     description: >-
   *       Hosted edition only. Reviews it already governs keep the stages they started with.
   *       The stages' approvers are checked (as at creation) when `stages` is sent, so a workflow
   *       whose approver was deactivated since can still be switched off or renamed.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WorkflowId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/WorkflowUpdate' }
   *     responses:
   *       '200':
   *         description: The workflow as changed.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Workflow' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '422': { $ref: '#/components/responses/Unworkable' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deleteWorkflow
   *     tags: [routing]
   *     summary: Delete an approval workflow (admin)
   *     description: Hosted edition only. Reviews it already governs finish under it.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/WorkflowId' }]
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
  router.get('/workflows/:workflow_id', async (req, res) => {
    res.json(await workflows.get(principalOf(res), pathInteger(req, 'workflow_id')));
  });

  router.patch('/workflows/:workflow_id', async (req: Request<{ workflow_id: string }, unknown, WorkflowChanges>, res) => {
    res.json(await workflows.update(principalOf(res), pathInteger(req, 'workflow_id'), req.body));
  });

  router.delete('/workflows/:workflow_id', async (req, res) => {
    await workflows.delete(principalOf(res), pathInteger(req, 'workflow_id'));
    res.status(204).end();
  });

  return router;
}
