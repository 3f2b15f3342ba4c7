import { hash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ANONYMOUS_LOCAL, INSTALLATION, type Principal } from '../domain/shared/principal';
import type { Logger } from '../logging';
import { clientAddress } from './client-address';
import { sendProblem } from './problems';
import { TokenBuckets } from './token-buckets';

/**
 * Wrong keys a client may present: a burst of 30 (a reviewer's mistyped key reaches the API
 * through several of the dashboard's requests at once), then 10 a minute; past that, its keys
 * are refused with 429 for a while. Guessing a key must not be a matter of sending enough
 * requests. A request without any key does not count: a dashboard asks for the key after its
 * first 401s.
 */
const WRONG_KEYS_PER_MINUTE = 10;
const WRONG_KEYS_IN_A_BURST = 30;

/**
 * Open without a key even when authentication is on: liveness checks, the API's documentation,
 * the keys that verify receipts, and Slack's requests (which Slack signs instead: `routes/slack.ts`
 * checks the signature).
 */
export function isPublicPath(path: string): boolean {
  return path === '/health' || path === '/openapi.json' || path === '/.well-known/jwks.json' || /^\/(docs|redoc)(\/|$)/.test(path) || SLACK_SIGNED.has(path);
}

const SLACK_SIGNED = new Set(['/integrations/slack/interactions', '/integrations/slack/events']);

function digest(value: string): Buffer {
  // The one-shot hash: every request with a key hashes it, and a Hash object costs more than the hashing.
  return hash('sha256', value, 'buffer');
}

/** Who is calling, as authentication established it: anyone on this machine when it is off. */
export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? ANONYMOUS_LOCAL;
}

/** Who a presented key stands for, or null for a key that opens nothing. */
export type KeyResolver = (presented: string) => Promise<Principal | null> | Principal | null;

export interface BearerKeys {
  resolve: KeyResolver;
  /**
   * The keys no one can guess (256 random bits), which open what they open even for a client
   * over its wrong-key budget. A client over it is refused its guessable keys (a user-chosen
   * installation or operator key) unread, the right one too: answering the right one would let
   * a guesser keep going at full speed and learn when it hit. A random key's answer helps no
   * guesser, and refusing it would let one agent with a stale key lock out every agent behind
   * the same address.
   */
  resolveUnguessable?: KeyResolver;
}

function bearerKeyOf(req: Request): string | null {
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.get('authorization') ?? '')?.[1] ?? null;
}

function tooManyWrongKeys(res: Response, waitSeconds: number): void {
  res.set('Retry-After', String(waitSeconds));
  sendProblem(res, 429, `too many wrong API keys from this address; retry in ${waitSeconds} s with the right one`);
}

/**
 * `Authorization: Bearer <key>` on every non-public path, the key resolved to a caller. Wrong
 * keys are counted per client (`clientAddress`), so one client's guesses never refuse another's
 * key. A presented key spends a try before it is looked up, so guesses sent at once cannot
 * outrun the budget while lookups are under way; a key that opens something gives it back.
 */
export function requireBearerKey(keys: BearerKeys, log: Logger, clock: () => number = Date.now): RequestHandler {
  const wrongKeys = new TokenBuckets(WRONG_KEYS_PER_MINUTE, WRONG_KEYS_IN_A_BURST, clock);
  return (req, res, next) => {
    if (isPublicPath(req.path)) return next();
    const presented = bearerKeyOf(req);
    if (presented === null) {
      res.set('WWW-Authenticate', 'Bearer realm="greenlight"');
      return sendProblem(res, 401, 'this API requires an API key: send Authorization: Bearer <api_key>');
    }
    const client = clientAddress(req);
    const blockedFor = wrongKeys.take(client);
    const resolve = blockedFor === 0 ? keys.resolve : keys.resolveUnguessable;
    if (!resolve) return tooManyWrongKeys(res, blockedFor);
    Promise.resolve(resolve(presented)).then((principal) => {
      if (principal) {
        if (blockedFor === 0) wrongKeys.giveBack(client);
        res.locals.principal = principal;
        return next();
      }
      if (blockedFor > 0) return tooManyWrongKeys(res, blockedFor);
      if (wrongKeys.waitSeconds(client) > 0) log.warn('wrong API keys from one client: its keys are refused for a while', { client });
      res.set('WWW-Authenticate', 'Bearer realm="greenlight", error="invalid_token"');
      sendProblem(res, 401, 'the API key is not valid');
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
export function installationKey(apiKey: string): BearerKeys {
  const matches = matchesSecret(apiKey);
  const id = digest(apiKey).toString('hex');
  return { resolve: (presented) => (matches(presented) ? { kind: 'api_key', scope: INSTALLATION, id } : null) };
}
