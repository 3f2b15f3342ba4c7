import type { NextFunction, RequestHandler, Response } from 'express';
import type { AgentService } from '../domain/organizations/agents';
import type { AuditService } from '../domain/organizations/audit';
import type { OrganizationService } from '../domain/organizations/organizations';
import type { OrganizationRouting } from '../domain/routing/organization-rules';
import type { PeopleService } from '../domain/people/people';
import type { Workflows } from '../domain/workflows/workflows';
import type { Evaluations } from '../domain/evaluations/evaluations';
import type { WebhookService } from '../domain/webhooks/webhooks';
import { OPERATOR, type Principal } from '../domain/shared/principal';
import type { SignInService } from '../domain/people/sign-in';
import type { Logger } from '../logging';
import { type Caller, HOSTED_CALLERS } from './callers';
import type { ChatInstallations } from '../domain/chat/installations';
import { type BearerKeys, isPublicPath, type KeyResolver, matchesSecret, principalOf, requireBearerKey } from './auth';
import { sendProblem } from './problems';
import { carriesCsrfToken, clearSessionCookie, sessionTokenOf } from './session-cookie';

export interface HostedOptions {
  organizations: OrganizationService;
  agents: AgentService;
  audit: AuditService;
  people: PeopleService;
  routing: OrganizationRouting;
  workflows: Workflows;
  evaluations: Evaluations;
  webhooks: WebhookService;
  signIn: SignInService;
  chatInstallations: ChatInstallations;
  /** The dashboard as people reach it: Slack's install ends on its console page. */
  consoleUrl: string;
  /** The key that may create organizations; empty: none may. */
  operatorKey: string;
  /** The dashboard is reached over https (`public_url`): session cookies are marked Secure. */
  secureCookies: boolean;
}

/** Signing in needs no credential yet: its routes read the session cookie themselves. */
export function isHostedPublicPath(path: string): boolean {
  // Slack's redirect back carries no key: its single-use state is the credential.
  return isPublicPath(path) || /^\/(sessions|invitations)(\/|$)/.test(path) || path === '/integrations/slack/oauth/callback';
}

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The hosted edition's keys: an organization's (read once per process and kept until a key is
 * revoked: see `OrganizationService.authenticate`), or the operator's.
 * Organizations' keys are 256 random bits; the operator's is chosen by a person. An
 * organization's key is looked up first: agents send one with every request, and comparing it
 * with the operator's too would hash it twice.
 */
export function hostedKeys(hosted: HostedOptions): BearerKeys {
  const isOperator = hosted.operatorKey ? matchesSecret(hosted.operatorKey) : () => false;
  const organizationKey: KeyResolver = (presented) => hosted.organizations.authenticate(presented);
  const organizationOrOperatorKey = async (presented: string): Promise<Principal | null> => (await organizationKey(presented)) ?? (isOperator(presented) ? OPERATOR : null);
  return { resolve: organizationOrOperatorKey, resolveUnguessable: organizationKey };
}

/**
 * Who is calling, in the hosted edition: an API key (`Authorization: Bearer`), or a person
 * signed in to the dashboard (its session cookie). A change made with a session must carry the
 * session's CSRF token, which a page of another site cannot read; a key needs none, since no
 * browser sends one by itself.
 */
export function hostedAuthentication(hosted: HostedOptions, log: Logger, clock?: () => number): RequestHandler {
  const byKey = requireBearerKey(hostedKeys(hosted), log, clock);
  return (req, res, next) => {
    if (isHostedPublicPath(req.path)) {
      next();
      return;
    }
    const token = sessionTokenOf(req);
    if (token === null || req.get('authorization') !== undefined) {
      void byKey(req, res, next);
      return;
    }
    hosted.signIn.authenticate(token).then((found) => {
      if (!found) {
        clearSessionCookie(req, res, hosted.secureCookies);
        return sendProblem(res, 401, 'your session has ended (signed out, expired, or your account deactivated); sign in again');
      }
      if (!READ_ONLY_METHODS.has(req.method) && !carriesCsrfToken(req, found.csrfToken)) {
        return sendProblem(res, 403, 'a change made with a session needs its CSRF token in the X-CSRF-Token header (from GET /sessions/current)');
      }
      res.locals.principal = found.principal;
      next();
    }, next);
  };
}

/** The caller a principal of the hosted edition is, in the terms of `HOSTED_CALLERS`. */
function callerOf(principal: Principal): Caller | null {
  if (principal.kind === 'operator') return 'operator';
  if (principal.user) return principal.user.role;
  return principal.kind === 'api_key' && principal.access ? principal.access : null;
}

/** Why `caller` may not do what only `callers` may, in words. */
function refusal(caller: Caller | null, callers: readonly Caller[], operationId?: string): string {
  if (caller === 'operator') return "the operator key only creates organizations (POST /organizations); use an organization's API key";
  if (operationId === 'decideReview') {
    return caller === 'viewer' ? 'a viewer reads reviews but does not decide them' : "a decision is a person's to make: an agent key cannot decide reviews";
  }
  if (caller === 'reviewer' || caller === 'viewer') return `this needs an admin of the organization; you are signed in as a ${caller}`;
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
    if (!operationId || isHostedPublicPath(req.path)) return next();
    refuseUnless(HOSTED_CALLERS[operationId] ?? [], res, next, operationId);
  };
}

/** `/mcp`, which the validator does not see, serves agents: an organization's API keys, not people's sessions. */
export function hostedMcpAccess(): RequestHandler {
  return (_req, res, next) => {
    const principal = principalOf(res);
    if (principal.kind === 'api_key') return refuseUnless(['admin', 'agent'], res, next);
    sendProblem(res, 403, principal.kind === 'user' ? "MCP is for agents: use an organization's API key, not a signed-in session" : refusal(callerOf(principal), ['admin', 'agent']));
  };
}
