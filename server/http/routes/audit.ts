import { type Request, Router } from 'express';
import type { AuditService } from '../../domain/organizations/audit';
import type { AuditFilters } from '../../domain/organizations/ports';
import { organizationOfCaller } from '../../domain/shared/scope';
import { principalOf } from '../auth';
import { queryInteger } from '../params';

/**
 * The organization's audit log (hosted edition only: 404 in the self-hosted one).
 *
 * @openapi
 * components:
 *   schemas:
 *     AuditEntry:
 *       type: object
 *       required: [id, organization_id, actor, action, target_type, target_id, data, created_at, sequence, prev_hash, hash]
 *       properties:
 *         id: { type: integer }
 *         organization_id: { type: integer }
 *         actor:
 *           type: object
 *           required: [type, id, label]
 *           properties:
 *             type: { type: string, enum: [api_key, user, operator, system] }
 *             id: { type: string, nullable: true, description: '`key:<id>` for an API key, `user:<id>` for a person; null for the system (expiry).' }
 *             label: { type: string, nullable: true, description: "The key's or the person's name when the change was made." }
 *         action: { type: string, description: 'e.g. review.created, review.decided, api_key.revoked' }
 *         target_type: { type: string }
 *         target_id: { type: integer, nullable: true }
 *         data: { type: object, additionalProperties: true }
 *         created_at: { type: string, format: date-time }
 *         sequence: { type: integer, minimum: 1, description: "The entry's place in the organization's log: 1, 2, 3 … without gaps." }
 *         prev_hash: { type: string, description: "The hash of the organization's entry before this one (64 zeros for the first)." }
 *         hash: { type: string, description: 'SHA-256 of prev_hash followed by the canonical JSON (keys sorted) of the other fields but id.' }
 *     AuditTarget:
 *       type: object
 *       description: A target the page's entries name, as it is now.
 *       required: [type, id, name]
 *       properties:
 *         type: { type: string, description: "The entries' `target_type`." }
 *         id: { type: integer, description: "The entries' `target_id`." }
 *         name:
 *           type: string
 *           description: >-
 *             What people know it by: a person's, team's, key's, agent's, rule's, workflow's or
 *             organization's name, a review's task type, a webhook's URL, an attachment's file name.
 *         links: { $ref: '#/components/schemas/ReviewLinks' }
 *     AuditPage:
 *       type: object
 *       required: [entries, next_cursor, targets]
 *       properties:
 *         entries:
 *           type: array
 *           items: { $ref: '#/components/schemas/AuditEntry' }
 *         next_cursor: { type: integer, nullable: true, description: 'Pass as `cursor` for the next (older) page; null on the last.' }
 *         targets:
 *           type: array
 *           description: >-
 *             The targets of these entries that exist in the organization now, with their names (and,
 *             for a review, its `links` where the dashboard's address is known); one since removed is
 *             not listed. Beside the entries rather than in them: an entry's hash covers its fields as
 *             they were written.
 *           items: { $ref: '#/components/schemas/AuditTarget' }
 *       example:
 *         entries:
 *           - { id: 12, organization_id: 1, actor: { type: api_key, id: 'key:2', label: Refund agent }, action: review.decided, target_type: review, target_id: 42, data: { decision_type: approve, reviewer_id: null, reviewer_name: null }, created_at: '2026-11-24T09:05:00.000Z', sequence: 12, prev_hash: 9f2c4e0b7a1d3c5e8f6a2b4d1c3e5f7a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e, hash: 3b1d5f7a9c2e4f6a8b0d1c3e5f7a9b2d4f6a8c0e1f3a5b7c9d2e4f6a8b0c1d3e }
 *         next_cursor: null
 *         targets:
 *           - { type: review, id: 42, name: refund, links: { dashboard: 'https://review.example.com/#/reviews/42' } }
 *     AuditVerification:
 *       type: object
 *       required: [valid, entries, first_invalid_id, head]
 *       properties:
 *         valid: { type: boolean }
 *         entries: { type: integer, description: 'Entries checked.' }
 *         first_invalid_id:
 *           type: integer
 *           nullable: true
 *           description: >-
 *             The first entry whose hash, link to the entry before it, or sequence does not hold.
 *             Null with `valid` false: the entries end before the head, so the newest were removed.
 *         head:
 *           type: object
 *           description: >-
 *             Where the log ends, as kept apart from its entries and moved in the transaction of
 *             every append: the newest entry's sequence and hash (0 and 64 zeros before the first).
 *           required: [sequence, hash]
 *           properties:
 *             sequence: { type: integer, minimum: 0 }
 *             hash: { type: string }
 *       example: { valid: true, entries: 128, first_invalid_id: null, head: { sequence: 128, hash: 3b1d5f7a9c2e4f6a8b0d1c3e5f7a9b2d4f6a8c0e1f3a5b7c9d2e4f6a8b0c1d3e } }
 */
export function auditRoutes(audit: AuditService): Router {
  const router = Router();

  /**
   * @openapi
   * /audit-logs:
   *   get:
   *     operationId: listAuditLog
   *     tags: [organizations]
   *     summary: The organization's audit log, newest first (admin key)
   *     description: >-
   *       Hosted edition only. One entry per change and administrative action, written in the
   *       transaction of the change. No endpoint edits or deletes an entry, and the database
   *       refuses to.
   *     x-edition: hosted
   *     parameters:
   *       - { name: action, in: query, schema: { type: string, maxLength: 64 } }
   *       - { name: actor_type, in: query, schema: { type: string, enum: [api_key, user, operator, system] } }
   *       - { name: actor_id, in: query, schema: { type: string, maxLength: 64 } }
   *       - { name: target_type, in: query, schema: { type: string, maxLength: 32 } }
   *       - { name: target_id, in: query, schema: { type: integer } }
   *       - { name: since, in: query, schema: { type: string, format: date-time } }
   *       - { name: until, in: query, schema: { type: string, format: date-time } }
   *       - { name: cursor, in: query, description: 'The `next_cursor` of the page before.', schema: { type: integer, minimum: 1 } }
   *       - { name: limit, in: query, schema: { type: integer, minimum: 1, maximum: 500, default: 100 } }
   *     responses:
   *       '200':
   *         description: A page of entries.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/AuditPage' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/audit-logs', async (req: Request, res) => {
    const text = (name: string): string | undefined => req.query[name] as string | undefined;
    const time = (name: string): number | undefined => (text(name) === undefined ? undefined : Date.parse(text(name) as string));
    const filters: AuditFilters = {
      action: text('action'),
      actor_type: text('actor_type') as AuditFilters['actor_type'],
      actor_id: text('actor_id'),
      target_type: text('target_type'),
      target_id: queryInteger(req, 'target_id', undefined),
      since: time('since'),
      until: time('until'),
    };
    const organizationId = organizationOfCaller(principalOf(res));
    res.json(await audit.list(organizationId, filters, queryInteger(req, 'cursor', undefined) ?? null, queryInteger(req, 'limit', 100)));
  });

  /**
   * @openapi
   * /audit-logs/verify:
   *   get:
   *     operationId: verifyAuditLog
   *     tags: [organizations]
   *     summary: Check the audit log's hash chain (admin key)
   *     description: >-
   *       Hosted edition only. Recomputes every entry's hash from the first one on, up to the
   *       log's head (the sequence and hash of its newest entry, kept apart from the entries); an
   *       entry changed, removed or inserted outside Greenlight breaks the chain there, and
   *       newest entries removed leave the log ending before its head. Entries appended while
   *       the check runs are left for the next one.
   *     x-edition: hosted
   *     responses:
   *       '200':
   *         description: Whether the chain holds, and where it breaks first.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/AuditVerification' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.get('/audit-logs/verify', async (_req, res) => {
    res.json(await audit.verify(organizationOfCaller(principalOf(res))));
  });

  return router;
}
