import { createHmac, timingSafeEqual } from 'node:crypto';

/** How old a signed request may be (Slack's own advice): an older one may be a replay. */
export const MAX_REQUEST_AGE_SECONDS = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** `v0=` and the hex HMAC-SHA256 of `v0:{timestamp}:{body}` with the signing secret. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
}

/**
 * Whether a request came from Slack: `X-Slack-Signature` over the raw body with
 * `X-Slack-Request-Timestamp`, at most five minutes either way of `nowMs`, compared in
 * constant time. The reason is for the log, never for the caller.
 */
export function verifySlackSignature(
  signingSecret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: Buffer,
  nowMs: number,
): SignatureCheck {
  if (!signingSecret) return { ok: false, reason: 'no slack_signing_secret is set' };
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) return { ok: false, reason: 'the request is not signed' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'the timestamp is not a number of seconds' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_REQUEST_AGE_SECONDS) return { ok: false, reason: 'the timestamp is more than five minutes away' };
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, rawBody));
  const given = Buffer.from(signature);
  // timingSafeEqual needs equal lengths; a length says nothing of the secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'the signature does not match' };
  return { ok: true };
}
