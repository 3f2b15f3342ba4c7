import { createHash, createPublicKey, verify } from 'node:crypto';

export interface Jwks {
  keys: Array<{ kty: string; crv: string; x: string; kid: string; alg?: string; use?: string }>;
}

export interface CheckedReceipt {
  header: { alg: string; kid: string; typ?: string };
  claims: Record<string, any>;
}

/**
 * A receipt checked without jose or any code of the server: the JWS signing input
 * (`header.payload`, RFC 7515) verified with Node's own Ed25519 against the JWK its `kid`
 * names. Null when no listed key made the signature; `exp` is left to the caller.
 */
export function checkWithNodeCrypto(receipt: string, jwks: Jwks): CheckedReceipt | null {
  const [header64, payload64, signature64] = receipt.split('.');
  const header = JSON.parse(Buffer.from(header64, 'base64url').toString('utf8')) as CheckedReceipt['header'];
  if (header.alg !== 'EdDSA') return null;
  const jwk = jwks.keys.find((key) => key.kid === header.kid);
  if (!jwk) return null;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  if (!verify(null, Buffer.from(`${header64}.${payload64}`, 'ascii'), key, Buffer.from(signature64, 'base64url'))) return null;
  return { header, claims: JSON.parse(Buffer.from(payload64, 'base64url').toString('utf8')) };
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The receipt with one claim changed and the signature kept: what a forger who cannot sign would send. */
export function tampered(receipt: string, change: Record<string, unknown>): string {
  const [header64, payload64, signature64] = receipt.split('.');
  const claims = { ...JSON.parse(Buffer.from(payload64, 'base64url').toString('utf8')), ...change };
  return `${header64}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature64}`;
}
