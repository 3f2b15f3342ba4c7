import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { sendProblem } from './problems';

/** Open without a key even when authentication is on: liveness checks and the API's documentation. */
export function isPublicPath(path: string): boolean {
  return path === '/health' || path === '/openapi.json' || /^\/(docs|redoc)(\/|$)/.test(path);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Who is calling, for what is kept per caller (idempotency keys): a digest of their API key,
 * never the key itself; empty when authentication is off and every caller is the same.
 */
export function callerScope(res: Response): string {
  return typeof res.locals.callerScope === 'string' ? res.locals.callerScope : '';
}

/**
 * `Authorization: Bearer <api_key>` on every non-public path. Both sides are hashed to the
 * same length first, so the comparison takes the same time whatever the key sent.
 */
export function requireApiKey(apiKey: string): RequestHandler {
  const expected = digest(apiKey);
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const header = req.get('authorization') ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) {
      res.set('WWW-Authenticate', 'Bearer realm="greenlight"');
      return sendProblem(res, 401, 'this API requires an API key: send Authorization: Bearer <api_key>');
    }
    const presented = digest(match[1]);
    if (!timingSafeEqual(presented, expected)) {
      res.set('WWW-Authenticate', 'Bearer realm="greenlight", error="invalid_token"');
      return sendProblem(res, 401, 'the API key is not valid');
    }
    res.locals.callerScope = presented.toString('hex');
    next();
  };
}
