/**
 * Standard Webhooks (https://www.standardwebhooks.com): the secret's form, the signature
 * receivers verify, and the retry schedule's delays. Pure functions, no I/O.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** `whsec_` and the base64 of 32 random bytes: the form receivers' libraries expect. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** `v1,` and the base64 HMAC-SHA256, keyed by the secret's bytes, of `{id}.{timestamp}.{body}`. */
export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;
}

/** The `webhook-signature` header: one signature per live secret, space-separated (both during a rotation). */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signature(secret, messageId, timestampSeconds, body)).join(' ');
}

/**
 * How long to wait before the next attempt, in milliseconds, or null when the schedule is
 * spent: the schedule's delay for this retry, within ±10 % so that receivers coming back up
 * are not all called at once, and never sooner than a `Retry-After` the receiver sent.
 */
export function retryDelayMs(failedAttempts: number, scheduleSeconds: readonly number[], retryAfterSeconds: number | null, random: () => number = Math.random): number | null {
  const base = scheduleSeconds[failedAttempts - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (0.9 + 0.2 * random());
  return Math.round(Math.max(jittered, (retryAfterSeconds ?? 0) * 1000));
}
