import type { components } from './generated/openapi.js';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, type JSONWebKeySet, jwtVerify, type JWTVerifyGetKey } from 'jose';

/** What a verified receipt says (docs/receipts.md): its claims as the OpenAPI document describes them. */
export type ReceiptClaims = components['schemas']['ReceiptClaims'];

export type ReceiptFailure = 'missing' | 'signature' | 'expired' | 'malformed' | 'nothing_to_run' | 'action_mismatch' | 'wrong_review';

/** A receipt that does not allow the action: do not run it. */
export class ReceiptError extends Error {
  constructor(
    readonly reason: ReceiptFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ReceiptError';
  }
}

export interface VerifyReceiptOptions {
  /** The key set (`GET /.well-known/jwks.json`), fetched beforehand: verifying then needs no network at all. */
  jwks?: JSONWebKeySet;
  /** Else the API (as the client's `baseUrl`), whose key set is fetched and kept, and fetched again for an unknown `kid`. */
  serverUrl?: string;
  /** Refuse a receipt of another issuer (the server's `public_url`). */
  issuer?: string;
  /** Refuse a receipt about another review. */
  reviewId?: number;
  /** Seconds of clock difference forgiven at `exp` (default 0). */
  clockToleranceSeconds?: number;
  /** The fetch for `serverUrl` (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** Remote key sets by URL: fetched once per process, again when a receipt names a key they lack (a rotation). */
const remoteKeySets = new Map<string, JWTVerifyGetKey>();

function keySetOf(options: VerifyReceiptOptions): JWTVerifyGetKey {
  if (options.jwks) return createLocalJWKSet(options.jwks);
  if (!options.serverUrl) throw new TypeError('verifyReceipt needs { jwks } or { serverUrl }');
  const url = `${options.serverUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
  let keySet = remoteKeySets.get(url);
  if (!keySet) {
    const fetchWith = options.fetch;
    // A rotation's new key signs at once: a receipt naming a kid the set lacks fetches it again
    // after a second, not after jose's default 30 s, in which every such receipt would be refused.
    keySet = createRemoteJWKSet(new URL(url), { cooldownDuration: 1_000, ...(fetchWith ? { [customFetch]: (input: string, init: RequestInit) => fetchWith(input, init) } : {}) });
    remoteKeySets.set(url, keySet);
  }
  return keySet;
}

/** SHA-256 of the text's UTF-8 bytes, lowercase hex (WebCrypto: Node and browsers alike). */
export async function actionSha256(action: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(action));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function failureOf(error: unknown): ReceiptError {
  if (error instanceof errors.JWTExpired) return new ReceiptError('expired', `the receipt has expired (${error.message}): the decision is too old to act on; file the action again`);
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return new ReceiptError('signature', 'the receipt was not signed by this Greenlight server\'s keys (or was changed after signing)');
  }
  return new ReceiptError('malformed', `the receipt is not valid: ${(error as Error).message}`);
}

/**
 * Checks that `receipt` is a decision of this Greenlight server (its Ed25519 signature, against
 * the key set), still valid (`exp`), and about exactly `action`: the SHA-256 of its UTF-8 bytes
 * must be the receipt's `action_sha256`. Resolves with the claims; throws `ReceiptError` when
 * the action must not run (a rejection's receipt names no action, so it never verifies).
 *
 * `action` is the text as the review holds it: `proposed_action` when approved,
 * `modified_action` when modified. A tool call's arguments are checked through that text (the
 * one text argument, or the JSON the client sent and the reviewer edited), never re-serialised.
 */
export async function verifyReceipt(receipt: string | null | undefined, action: string, options: VerifyReceiptOptions): Promise<ReceiptClaims> {
  if (typeof receipt !== 'string' || receipt === '') throw new ReceiptError('missing', 'the decision carries no receipt');
  let claims: ReceiptClaims;
  try {
    const verified = await jwtVerify(receipt, keySetOf(options), {
      algorithms: ['EdDSA'],
      issuer: options.issuer,
      clockTolerance: options.clockToleranceSeconds ?? 0,
      requiredClaims: ['iss', 'sub', 'iat', 'exp', 'jti'],
    });
    claims = verified.payload as unknown as ReceiptClaims;
  } catch (error) {
    throw failureOf(error);
  }
  if (options.reviewId !== undefined && claims.sub !== String(options.reviewId)) {
    throw new ReceiptError('wrong_review', `the receipt is about review ${claims.sub}, not ${options.reviewId}`);
  }
  if (typeof claims.action_sha256 !== 'string') throw new ReceiptError('nothing_to_run', `the receipt records a ${claims.decision_type}: it allows no action`);
  if ((await actionSha256(action)) !== claims.action_sha256) {
    throw new ReceiptError('action_mismatch', 'the action about to run is not the one the decision was made on');
  }
  return claims;
}
