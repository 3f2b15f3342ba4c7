import type { RequestHandler } from 'express';
import { isPublicPath, principalOf } from './auth';
import { clientAddress } from './client-address';
import { sendProblem } from './problems';
import { TokenBuckets } from './token-buckets';

/**
 * `perMinute` requests a minute per caller — per API key or session, or per client
 * (`clientAddress`) without one — with bursts of up to a minute's worth (a token bucket).
 * Past it a 429 says when the next request will be accepted. Liveness checks and the docs
 * are exempt.
 */
export function rateLimit(perMinute: number, clock: () => number = Date.now): RequestHandler {
  const buckets = new TokenBuckets(perMinute, perMinute, clock);
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const scope = principalOf(res).id;
    const retryAfterSeconds = buckets.take(scope || `address ${clientAddress(req)}`);
    if (retryAfterSeconds === 0) return next();
    res.set('Retry-After', String(retryAfterSeconds));
    sendProblem(res, 429, `more than ${perMinute} requests a minute from this ${scope ? 'API key' : 'address'} (rate_limit_per_minute); retry in ${retryAfterSeconds} s`);
  };
}
