import { literal, Op, type WhereOptions } from 'sequelize';
import type { Scope } from '../domain/shared/principal';

/** The condition that keeps a query of the reviews table inside the caller's organization (none for the whole installation) and, for a key bound to an agent, that agent's reviews. */
export function reviewsWhere(scope: Scope): { organization_id?: number; agent_id?: number } {
  return { ...organizationWhere(scope), ...(scope.agentId === undefined ? {} : { agent_id: scope.agentId }) };
}

/**
 * The same for what belongs to a review (its feedback, its attachments): rows of the caller's
 * organization, and, for a key bound to an agent, of that agent's reviews alone.
 */
export function reviewPartsWhere(scope: Scope): WhereOptions<{ organization_id: number | null; review_id: number }> {
  if (scope.agentId === undefined) return organizationWhere(scope);
  // A number read from the key's own row, never the caller's text; checked all the same, as it is written into the SQL.
  if (!Number.isSafeInteger(scope.agentId)) throw new TypeError(`agent id ${scope.agentId} is not an integer`);
  // Under Op.and, not `review_id`: callers add `review_id: <one review>` beside it, which a key of the same name would replace.
  return { ...organizationWhere(scope), [Op.and]: [{ review_id: { [Op.in]: literal(`(SELECT id FROM reviews WHERE agent_id = ${scope.agentId})`) } }] };
}

function organizationWhere(scope: Scope): { organization_id?: number } {
  return scope.organizationId === null ? {} : { organization_id: scope.organizationId };
}

/**
 * `reviewPartsWhere` for raw SQL on a table with `organization_id` and `review_id` (the outbox,
 * idempotency keys): the conditions, each after ` AND`, and their bound values; nothing for the
 * whole installation (SQLite refuses a bound value the statement does not use).
 */
export function reviewPartsSql(scope: Scope): { sql: string; bind: { organizationId?: number; agentId?: number } } {
  const organization = scope.organizationId === null ? { sql: '', bind: {} } : { sql: ' AND organization_id = $organizationId', bind: { organizationId: scope.organizationId } };
  if (scope.agentId === undefined) return organization;
  return { sql: `${organization.sql} AND review_id IN (SELECT id FROM reviews WHERE agent_id = $agentId)`, bind: { ...organization.bind, agentId: scope.agentId } };
}
