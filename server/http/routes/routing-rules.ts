import { type Request, Router } from 'express';
import type { OrganizationRouting, RoutingRuleChanges, RoutingRuleInput } from '../../domain/routing/organization-rules';
import type { RoutableReview } from '../../domain/routing/conditions';
import { principalOf } from '../auth';
import { pathInteger } from '../params';

/**
 * An organization's routing rules (hosted edition only: 404 in the self-hosted one), on the
 * engine and in the condition language of the self-hosted `routing` setting.
 *
 * @openapi
 * components:
 *   parameters:
 *     RoutingRuleId:
 *       name: rule_id
 *       in: path
 *       required: true
 *       schema: { type: integer, minimum: 1 }
 *   schemas:
 *     RoutingField:
 *       type: string
 *       enum: [task_type, proposed_action, agent_reasoning, confidence_score, urgency, framework, agent_id, organization_id]
 *       description: >-
 *         The fields of a review a condition may test by name; any other is a dotted path into
 *         its metadata, `metadata.<key>[.<key>…]`.
 *     RoutingOperator:
 *       type: string
 *       enum: ['=', '!=', '<', '<=', '>', '>=', in, not_in, contains, matches]
 *       description: >-
 *         How a condition compares: `=` and `!=` a value of the same type (a number never
 *         equals a string); `<` `<=` `>` `>=` numbers, text, or urgencies in their order (low
 *         to critical); `in` and `not_in` a non-empty list; `contains` text within text or an
 *         item of a list; `matches` a regular expression (at most 500 characters, no nested
 *         quantifiers). A field the review lacks meets `!=` and `not_in` only.
 *     RoutingConditions:
 *       type: object
 *       additionalProperties: true
 *       description: >-
 *         A `RoutingField` or `metadata.<path>` → `{operator, value}` with a `RoutingOperator`;
 *         a bare value is short for `=`, a bare list for `in`. Every condition must hold; none is
 *         a rule that matches every review. What the engine refuses is a 400 naming it.
 *     RoutingRuleCreate:
 *       type: object
 *       additionalProperties: false
 *       required: [name, priority]
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100, description: 'Unique in the organization (409 otherwise); reviews record it as routing_rule.' }
 *         priority: { type: integer, minimum: -1000000, maximum: 1000000, description: 'The higher is tried first; ties by the older rule.' }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         assign_to_user_id: { type: integer, nullable: true, minimum: 1, description: 'A user of the organization (404 otherwise), an active reviewer or admin (422 otherwise: a viewer cannot decide); the review is assigned to their e-mail.' }
 *         assign_to_team_id: { type: integer, nullable: true, minimum: 1, description: 'A team of the organization (404 otherwise); its members see the review under Mine.' }
 *         action: { $ref: '#/components/schemas/RoutingRuleAction' }
 *         mode: { $ref: '#/components/schemas/RoutingRuleMode' }
 *         audit_sample_rate: { $ref: '#/components/schemas/RoutingRuleAuditSampleRate' }
 *         slack_channel_id: { $ref: '#/components/schemas/RoutingRuleSlackChannel' }
 *         is_active: { type: boolean, default: true }
 *         organization_id: { type: integer, nullable: true, description: "The caller's organization; another is a 404." }
 *       example: { name: large-refunds, priority: 100, conditions: { task_type: refund, metadata.amount: { operator: '>', value: 1000 } }, assign_to_team_id: 2 }
 *     RoutingRuleUpdate:
 *       type: object
 *       additionalProperties: false
 *       minProperties: 1
 *       properties:
 *         name: { type: string, minLength: 1, maxLength: 100 }
 *         priority: { type: integer, minimum: -1000000, maximum: 1000000 }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         assign_to_user_id: { type: integer, nullable: true, minimum: 1 }
 *         assign_to_team_id: { type: integer, nullable: true, minimum: 1 }
 *         action: { $ref: '#/components/schemas/RoutingRuleAction' }
 *         mode: { $ref: '#/components/schemas/RoutingRuleMode' }
 *         audit_sample_rate: { $ref: '#/components/schemas/RoutingRuleAuditSampleRate' }
 *         slack_channel_id: { $ref: '#/components/schemas/RoutingRuleSlackChannel' }
 *         is_active: { type: boolean }
 *       example: { is_active: false }
 *     RoutingRuleAction:
 *       type: object
 *       nullable: true
 *       additionalProperties: false
 *       required: [auto_decide]
 *       description: >-
 *         Decide instead of assign (null or absent: assign). A rule that decides names no
 *         assignee (400 otherwise). In `enforce` mode a matching review is decided at creation,
 *         as `rule:<name>`, with the rule named in the decision's notes and the audit log; in
 *         `shadow` mode it is only marked `shadow_rule_id` and goes to a person as usual.
 *       properties:
 *         auto_decide: { type: string, enum: [approve, reject] }
 *     RoutingRuleMode:
 *       type: string
 *       enum: [shadow, enforce]
 *       description: 'A deciding rule''s mode: `shadow` (the default) only marks the reviews it would decide; `enforce` decides them, but for its audit sample.'
 *     RoutingRuleAuditSampleRate:
 *       type: number
 *       minimum: 0
 *       maximum: 1
 *       description: 'The share of an enforcing rule''s reviews drawn at random for a person all the same (default 0.05), marked `audit_sample`; an evaluation run weighs each by 1 / this rate.'
 *     RoutingRuleSlackChannel:
 *       type: string
 *       nullable: true
 *       maxLength: 64
 *       description: >-
 *         A Slack channel id (C…, G…) the organization's Slack app was invited to: the reviews
 *         the rule routes are posted there rather than to the installation's channel (400 for
 *         anything else; null: the installation's). The channel is chosen as a review is
 *         created; its message stays there when the rule changes later.
 *       example: C0FINANCE1
 *     RoutingRuleAgreement:
 *       type: object
 *       required: [decided, agreed, share, lower_bound, confidence, pending]
 *       description: >-
 *         How often people agreed with what a deciding rule would have done, over its shadow
 *         and audit-sample reviews they decided (approved as proposed for approve, rejected for
 *         reject; expired reviews left out), with the one-sided Clopper–Pearson lower bound.
 *       properties:
 *         decided: { type: integer }
 *         agreed: { type: integer }
 *         share: { type: number, nullable: true }
 *         lower_bound: { type: number, nullable: true }
 *         confidence: { type: number }
 *         pending: { type: integer, description: 'Marked reviews still waiting for a person.' }
 *     RoutingRule:
 *       type: object
 *       required: [id, organization_id, name, priority, conditions, assign_to_user_id, assign_to_team_id, action, mode, audit_sample_rate, slack_channel_id, is_active, created_at, updated_at]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         name: { type: string }
 *         priority: { type: integer }
 *         conditions: { $ref: '#/components/schemas/RoutingConditions' }
 *         assign_to_user_id: { type: integer, nullable: true }
 *         assign_to_team_id: { type: integer, nullable: true }
 *         action: { $ref: '#/components/schemas/RoutingRuleAction' }
 *         mode: { type: string, enum: [shadow, enforce, null], nullable: true, description: 'Null for a rule that assigns.' }
 *         audit_sample_rate: { type: number, nullable: true, description: 'Null for a rule that assigns.' }
 *         slack_channel_id: { type: string, nullable: true, description: "The Slack channel the reviews it routes are posted to; null: the installation's." }
 *         is_active: { type: boolean }
 *         created_at: { type: string, format: date-time }
 *         updated_at: { type: string, format: date-time }
 *         agreement: { $ref: '#/components/schemas/RoutingRuleAgreement' }
 *       example: { id: 4, organization_id: 1, name: large-refunds, priority: 100, conditions: { task_type: refund, metadata.amount: { operator: '>', value: 1000 } }, assign_to_user_id: null, assign_to_team_id: 2, action: null, mode: null, audit_sample_rate: null, slack_channel_id: C0FINANCE1, is_active: true, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *     RoutingRuleList:
 *       type: object
 *       required: [routing_rules, count]
 *       properties:
 *         routing_rules:
 *           type: array
 *           items: { $ref: '#/components/schemas/RoutingRule' }
 *         count: { type: integer }
 *     RoutingSample:
 *       type: object
 *       additionalProperties: true
 *       required: [task_type, proposed_action]
 *       description: A review as an agent would file it (only the fields rules look at matter).
 *       properties:
 *         task_type: { type: string, maxLength: 255 }
 *         proposed_action: { type: string, maxLength: 100000 }
 *       example: { task_type: refund, proposed_action: Refund order 1042 in full (EUR 1,250.00), urgency: high, metadata: { amount: 1250 } }
 *     RoutingTrial:
 *       type: object
 *       required: [matched_rule, rules]
 *       properties:
 *         matched_rule:
 *           type: object
 *           nullable: true
 *           description: The rule that would route the review; null when none matches (it would go unassigned).
 *           required: [id, name, assign_to_user_id, assign_to_team_id]
 *           properties:
 *             id: { type: integer }
 *             name: { type: string }
 *             assign_to_user_id: { type: integer, nullable: true }
 *             assign_to_team_id: { type: integer, nullable: true }
 *         rules:
 *           type: array
 *           description: Every rule in the order they are tried, with each condition, the sample's value and whether it held.
 *           items:
 *             type: object
 *             required: [id, name, priority, is_active, matched, conditions]
 *             properties:
 *               id: { type: integer }
 *               name: { type: string }
 *               priority: { type: integer }
 *               is_active: { type: boolean }
 *               matched: { type: boolean }
 *               conditions:
 *                 type: array
 *                 items:
 *                   type: object
 *                   required: [field, operator, value, holds]
 *                   properties:
 *                     field:
 *                       anyOf:
 *                         - { $ref: '#/components/schemas/RoutingField' }
 *                         - { type: string, pattern: '^metadata(\.[^.\s]+)+$', description: A dotted path into the review's metadata. }
 *                     operator: { $ref: '#/components/schemas/RoutingOperator' }
 *                     value: {}
 *                     actual: { description: "The sample's value; absent when the sample lacks the field." }
 *                     holds: { type: boolean }
 *       example:
 *         matched_rule: { id: 4, name: large-refunds, assign_to_user_id: null, assign_to_team_id: 2 }
 *         rules:
 *           - { id: 4, name: large-refunds, priority: 100, is_active: true, matched: true, conditions: [{ field: task_type, operator: '=', value: refund, actual: refund, holds: true }] }
 */
export function routingRuleRoutes(routing: OrganizationRouting): Router {
  const router = Router();

  /**
   * @openapi
   * /routing-rules:
   *   post:
   *     operationId: createRoutingRule
   *     tags: [routing]
   *     summary: Add a routing rule (admin)
   *     description: >-
   *       Hosted edition only. Conditions the engine refuses (an unknown operator or field, a bad
   *       pattern) are a 400 naming the problem; an assignee who cannot decide (a viewer, a
   *       deactivated person) a 422.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/RoutingRuleCreate' }
   *     responses:
   *       '201':
   *         description: The rule.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/RoutingRule' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The organization has a rule of that name.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '422': { $ref: '#/components/responses/Unworkable' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   get:
   *     operationId: listRoutingRules
   *     tags: [routing]
   *     summary: The organization's routing rules, oldest first (admin)
   *     description: Hosted edition only. `POST /routing-rules/trial` shows the order they are tried in.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Every rule of the organization.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/RoutingRuleList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/routing-rules', async (req: Request<Record<string, string>, unknown, RoutingRuleInput>, res) => {
    res.status(201).json(await routing.create(principalOf(res), req.body));
  });

  router.get('/routing-rules', async (_req, res) => {
    res.json(await routing.list(principalOf(res)));
  });

  /**
   * @openapi
   * /routing-rules/trial:
   *   post:
   *     operationId: tryRoutingRules
   *     tags: [routing]
   *     summary: Which rule a sample review would meet, and why (admin)
   *     description: Hosted edition only. Changes nothing; the console's rule tester.
   *     x-edition: hosted
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/RoutingSample' }
   *     responses:
   *       '200':
   *         description: The rule that would match, and every rule's conditions on the sample.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/RoutingTrial' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/routing-rules/trial', async (req: Request<Record<string, string>, unknown, RoutableReview>, res) => {
    res.json(await routing.trial(principalOf(res), req.body));
  });

  /**
   * @openapi
   * /routing-rules/{rule_id}:
   *   get:
   *     operationId: getRoutingRule
   *     tags: [routing]
   *     summary: One routing rule (admin)
   *     description: Hosted edition only. Another organization's rule is a 404.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/RoutingRuleId' }]
   *     responses:
   *       '200':
   *         description: The rule.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/RoutingRule' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   patch:
   *     operationId: updateRoutingRule
   *     tags: [routing]
   *     summary: Change a routing rule (admin)
   *     description: >-
   *       Hosted edition only. The rule as a whole is checked again, as at creation; the
   *       assignee's role and state only when `assign_to_user_id` is sent, so a rule whose
   *       assignee was deactivated since can still be switched off.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/RoutingRuleId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/RoutingRuleUpdate' }
   *     responses:
   *       '200':
   *         description: The rule as changed.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/RoutingRule' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: Another rule of the organization has that name.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '422': { $ref: '#/components/responses/Unworkable' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *   delete:
   *     operationId: deleteRoutingRule
   *     tags: [routing]
   *     summary: Delete a routing rule (admin)
   *     description: Hosted edition only. Reviews it routed keep their assignee and its name.
   *     x-edition: hosted
   *     parameters: [{ $ref: '#/components/parameters/RoutingRuleId' }]
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
  router.get('/routing-rules/:rule_id', async (req, res) => {
    res.json(await routing.get(principalOf(res), pathInteger(req, 'rule_id')));
  });

  router.patch('/routing-rules/:rule_id', async (req: Request<{ rule_id: string }, unknown, RoutingRuleChanges>, res) => {
    res.json(await routing.update(principalOf(res), pathInteger(req, 'rule_id'), req.body));
  });

  router.delete('/routing-rules/:rule_id', async (req, res) => {
    await routing.delete(principalOf(res), pathInteger(req, 'rule_id'));
    res.status(204).end();
  });

  return router;
}
