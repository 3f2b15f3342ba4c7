import type { Scope } from '../domain/ports';

/** The condition that keeps a model query inside the caller's organization (none for the whole installation). */
export function scopeWhere(scope: Scope): { organization_id?: number } {
  return scope.organizationId === null ? {} : { organization_id: scope.organizationId };
}

/**
 * The same for raw SQL: ` AND organization_id = $organizationId` and its bound value, or nothing
 * for the whole installation (SQLite refuses a bound value the statement does not use).
 */
export function scopeSql(scope: Scope): { sql: string; bind: { organizationId?: number } } {
  return scope.organizationId === null ? { sql: '', bind: {} } : { sql: ' AND organization_id = $organizationId', bind: { organizationId: scope.organizationId } };
}
