import type { NextFunction, RequestHandler, Response } from 'express';
import type { AgentService } from '../domain/agents';
import { actingAs, type AuditService } from '../domain/audit';
import type { OrganizationService } from '../domain/organizations';
import type { PeopleService } from '../domain/people';
import { OPERATOR, type Principal } from '../domain/ports';
import { type Caller, HOSTED_CALLERS, MCP_CALLERS } from './callers';
import { isPublicPath, type KeyResolver, matchesSecret, principalOf } from './auth';
import { sendProblem } from './problems';

export interface HostedOptions {
  organizations: OrganizationService;
  agents: AgentService;
  audit: AuditService;
  people: PeopleService;
  /** The key that may create organizations; empty: none may. */
  operatorKey: string;
}

/** The hosted edition's keys: the operator's, or an organization's (looked up on every request). */
export function hostedKeys(hosted: HostedOptions): KeyResolver {
  const isOperator = hosted.operatorKey ? matchesSecret(hosted.operatorKey) : () => false;
  return (presented) => (isOperator(presented) ? OPERATOR : hosted.organizations.authenticate(presented));
}

/** The rest of the request runs on behalf of its caller: the audit entries of its changes name it. */
export function actingForCaller(): RequestHandler {
  return (_req, res, next) => actingAs(principalOf(res), next);
}

/** The caller a principal of the hosted edition is, in the terms of `HOSTED_CALLERS`. */
function callerOf(principal: Principal): Caller | null {
  if (principal.kind === 'operator') return 'operator';
  return principal.kind === 'api_key' && principal.access ? principal.access : null;
}

/** Why `caller` may not do what only `callers` may, in words. */
function refusal(caller: Caller | null, callers: readonly Caller[], operationId?: string): string {
  if (caller === 'operator') return "the operator key only creates organizations (POST /organizations); use an organization's API key";
  if (operationId === 'decideReview') return "a decision is a person's to make: an agent key cannot decide reviews";
  if (callers.includes('admin')) return 'this needs an admin API key of the organization';
  return 'only the operator key may do this';
}

/** Refuses (403) a caller that `callers` does not list. */
function refuseUnless(callers: readonly Caller[], res: Response, next: NextFunction, operationId?: string): void {
  const caller = callerOf(principalOf(res));
  if (caller === null || !callers.includes(caller)) return sendProblem(res, 403, refusal(caller, callers, operationId));
  next();
}

/**
 * Refuses (403) an operation to a caller `HOSTED_CALLERS` does not list for it, once the
 * OpenAPI validator has matched the request to its operation. Finer rules (whose organization)
 * are the use cases'.
 */
export function hostedAccess(): RequestHandler {
  return (req, res, next) => {
    const operationId = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
    if (!operationId || isPublicPath(req.path)) return next();
    refuseUnless(HOSTED_CALLERS[operationId] ?? [], res, next, operationId);
  };
}

/** The same rule for `/mcp`, which the validator does not see. */
export function hostedMcpAccess(): RequestHandler {
  return (_req, res, next) => refuseUnless(MCP_CALLERS, res, next);
}
