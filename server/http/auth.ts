import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { ANONYMOUS_LOCAL, INSTALLATION, type Principal } from '../domain/ports';
import type { Logger } from '../logging';
import { sendProblem } from './problems';
import { TokenBuckets } from './token-buckets';

/**
 * Wrong keys an address may present: a burst of 30 (a reviewer's mistyped key reaches the API
 * through several of the dashboard's requests at once), then 10 a minute; past that, its
 * requests are refused with 429 for a while. Guessing a key must not be a matter of sending
 * enough requests. A request without any key does not count: a dashboard asks for the key after
 * its first 401s.
 */
const WRONG_KEYS_PER_MINUTE = 10;
const WRONG_KEYS_IN_A_BURST = 30;

/** Open without a key even when authentication is on: liveness checks and the API's documentation. */
export function isPublicPath(path: string): boolean {
  return path === '/health' || path === '/openapi.json' || /^\/(docs|redoc)(\/|$)/.test(path);
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Who is calling, as authentication established it: anyone on this machine when it is off. */
export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? ANONYMOUS_LOCAL;
}

/** Who a presented key stands for, or null for a key that opens nothing. */
export type KeyResolver = (presented: string) => Promise<Principal | null> | Principal | null;

/**
 * `Authorization: Bearer <key>` on every non-public path, the key resolved to a caller by
 * `resolve`. An address that keeps presenting wrong keys is refused (429) before its keys are
 * even looked at.
 */
export function requireBearerKey(resolve: KeyResolver, log: Logger, clock: () => number = Date.now): RequestHandler {
  const wrongKeys = new TokenBuckets(WRONG_KEYS_PER_MINUTE, WRONG_KEYS_IN_A_BURST, clock);
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const address = req.socket.remoteAddress ?? 'unknown';
    const blockedFor = wrongKeys.waitSeconds(address);
    if (blockedFor > 0) {
      res.set('Retry-After', String(blockedFor));
      return sendProblem(res, 429, `too many wrong API keys from this address; retry in ${blockedFor} s with the right one`);
    }
    const header = req.get('authorization') ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) {
      res.set('WWW-Authenticate', 'Bearer realm="greenlight"');
      return sendProblem(res, 401, 'this API requires an API key: send Authorization: Bearer <api_key>');
    }
    Promise.resolve(resolve(match[1])).then((principal) => {
      if (!principal) {
        if (wrongKeys.take(address) === 0 && wrongKeys.waitSeconds(address) > 0) {
          log.warn('wrong API keys from one address: its requests are refused for a while', { address });
        }
        res.set('WWW-Authenticate', 'Bearer realm="greenlight", error="invalid_token"');
        return sendProblem(res, 401, 'the API key is not valid');
      }
      res.locals.principal = principal;
      next();
    }, next);
  };
}

/**
 * A key compared in constant time: both sides are hashed to the same length first, so the
 * comparison takes the same time whatever was sent.
 */
export function matchesSecret(secret: string): (presented: string) => boolean {
  const expected = digest(secret);
  return (presented) => timingSafeEqual(digest(presented), expected);
}

/** The self-hosted edition's one key, which opens the whole installation. */
export function installationKey(apiKey: string): KeyResolver {
  const matches = matchesSecret(apiKey);
  const id = digest(apiKey).toString('hex');
  return (presented) => (matches(presented) ? { kind: 'api_key', scope: INSTALLATION, id } : null);
}
