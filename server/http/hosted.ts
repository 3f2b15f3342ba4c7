import type { RequestHandler } from 'express';
import type { OrganizationService } from '../domain/organizations';
import { OPERATOR } from '../domain/ports';
import { isPublicPath, type KeyResolver, matchesSecret, principalOf } from './auth';
import { sendProblem } from './problems';

export interface HostedOptions {
  organizations: OrganizationService;
  /** The key that may create organizations; empty: none may. */
  operatorKey: string;
}

/** The hosted edition's keys: the operator's, or an organization's (looked up on every request). */
export function hostedKeys(hosted: HostedOptions): KeyResolver {
  const isOperator = hosted.operatorKey ? matchesSecret(hosted.operatorKey) : () => false;
  return (presented) => (isOperator(presented) ? OPERATOR : hosted.organizations.authenticate(presented));
}

const isDecision = (method: string, path: string): boolean => method === 'POST' && /^\/reviews\/[^/]+\/decide\/?$/.test(path);

/**
 * What a kind of caller may not do at all, refused (403) before any route runs: the operator
 * key only creates organizations; an agent key never decides, since a decision is a person's.
 * Finer rules (admin keys for the organization's settings and keys) are the use cases'.
 */
export function hostedAccess(): RequestHandler {
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const principal = principalOf(res);
    if (principal.kind === 'operator' && !(req.method === 'POST' && req.path === '/organizations')) {
      return sendProblem(res, 403, "the operator key only creates organizations (POST /organizations); use an organization's API key");
    }
    if (principal.access === 'agent' && isDecision(req.method, req.path)) {
      return sendProblem(res, 403, "a decision is a person's to make: an agent key cannot decide reviews");
    }
    next();
  };
}
