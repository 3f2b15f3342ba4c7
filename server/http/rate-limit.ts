import type { RequestHandler } from 'express';
import { callerScope, isPublicPath } from './auth';
import { sendProblem } from './problems';

interface Bucket {
  tokens: number;
  at: number;
}

const MINUTE_MS = 60_000;
/** Full buckets are forgotten (a new one starts full) every this many requests. */
const SWEEP_EVERY = 1_000;

/**
 * `perMinute` requests a minute per caller — per API key, or per client address when
 * authentication is off — with bursts of up to a minute's worth (a token bucket). Past it a
 * 429 says when the next request will be accepted. Liveness checks and the docs are exempt.
 */
export function rateLimit(perMinute: number, clock: () => number = Date.now): RequestHandler {
  const buckets = new Map<string, Bucket>();
  const perMs = perMinute / MINUTE_MS;
  let requests = 0;
  const refill = (bucket: Bucket, now: number): void => {
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
  };
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const now = clock();
    if (++requests % SWEEP_EVERY === 0) {
      for (const [caller, bucket] of buckets) if (now - bucket.at >= MINUTE_MS) buckets.delete(caller);
    }
    const scope = callerScope(res);
    const caller = scope || `address ${req.socket.remoteAddress ?? 'unknown'}`;
    const bucket = buckets.get(caller) ?? { tokens: perMinute, at: now };
    buckets.set(caller, bucket);
    refill(bucket, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return next();
    }
    const retryAfterSeconds = Math.ceil((1 - bucket.tokens) / perMs / 1000);
    res.set('Retry-After', String(retryAfterSeconds));
    sendProblem(res, 429, `more than ${perMinute} requests a minute from this ${scope ? 'API key' : 'address'} (rate_limit_per_minute); retry in ${retryAfterSeconds} s`);
  };
}
