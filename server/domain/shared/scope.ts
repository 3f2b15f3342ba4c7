import { AppError, notFound } from './errors';
import { NO_ORGANIZATION, type Principal, type Scope } from './principal';

/**
 * The organization a new record belongs to: the caller's. In the self-hosted edition, where the
 * scope is the whole installation, `organization_id` is a label the agent may set. A body naming
 * another organization than the caller's is a 404, as a record of another organization is.
 */
export function organizationOf(scope: Scope, requested: number | null | undefined): number | null {
  if (scope.organizationId === null) return requested ?? null;
  if (requested !== undefined && requested !== null && requested !== scope.organizationId) throw notFound('organization', requested);
  return scope.organizationId;
}

/** `scope` narrowed to the organization a filter (`?organization_id=N`) asks for. */
export function scopeOf(scope: Scope, requested: number | undefined): Scope {
  if (requested === undefined) return scope;
  return { ...scope, organizationId: organizationOf(scope, requested) };
}

/** The caller's organization, for what exists only inside one (the hosted edition's agents, audit log). */
export function organizationOfCaller(principal: Principal): number {
  const organizationId = principal.scope.organizationId;
  if (organizationId === null || organizationId === NO_ORGANIZATION.organizationId) throw new AppError(403, "this needs an organization's API key");
  return organizationId;
}


/** An admin of the caller's organization: its admin API key, or a person signed in as an admin. */
export function isOrganizationAdmin(principal: Principal): boolean {
  return (principal.kind === 'api_key' && principal.access === 'admin') || principal.user?.role === 'admin';
}
