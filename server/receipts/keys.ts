/**
 * The installation's receipt signing keys: Ed25519, made at first start, the private half kept
 * in the database encrypted under a key-encryption key that is never stored there (see
 * `keyEncryptionKey`), the public halves listed at /.well-known/jwks.json for as long as the
 * rows live, so receipts signed before a rotation still verify.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, generateKeyPairSync, hkdfSync, type KeyObject, randomBytes } from 'node:crypto';
import { ConfigError } from '../config/settings';
import type { ReceiptSigner } from '../domain/reviews/ports';
import type { ReceiptClaims } from '../domain/reviews/records';
import { actionSha256 } from '../domain/reviews/receipts';
import type { Tx } from '../domain/shared/unit-of-work';

/** A key as stored: the private half encrypted (`encryptPrivateKey`). */
export interface StoredReceiptKey {
  kid: string;
  /** The public JWK, JSON. */
  public_jwk: string;
  private_key: string;
  created_at: number;
  retired_at: number | null;
  current: boolean;
}

/** What the keys need from the database (`server/db/receipt-key-store.ts`). */
export interface ReceiptKeyRows {
  /** The key that signs now, read in `tx` when given. */
  current(tx?: Tx): Promise<Pick<StoredReceiptKey, 'kid' | 'private_key'> | null>;
  /** Every key, the current one first, then the newest. */
  all(): Promise<StoredReceiptKey[]>;
  /**
   * Stores `key` as the current key in one transaction; `replace` retires the current one
   * first. False when another process made a current key at the same moment.
   */
  makeCurrent(key: Omit<StoredReceiptKey, 'current' | 'retired_at'>, replace: boolean): Promise<boolean>;
}

export const RECEIPT_ALGORITHM = 'EdDSA';

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
let jose: Promise<Jose> | undefined;

/** jose is an ES module; the server is CommonJS, so it is imported on first use. */
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

/** The public key as /.well-known/jwks.json lists it. */
export interface ReceiptJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: typeof RECEIPT_ALGORITHM;
  use: 'sig';
}

const KEK_INFO = 'greenlight receipt signing keys v1';
const ENCRYPTION_VERSION = 'v1';

/**
 * The 32-byte AES key the private keys are encrypted under, derived (HKDF-SHA256) from the
 * secret text: the `receipt_key_encryption_key` setting, or the random one kept in a file of
 * `data_dir` when the setting is empty.
 */
export function keyEncryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), KEK_INFO, 32));
}

/** `v1.<iv>.<tag>.<ciphertext>` (base64url), AES-256-GCM with the kid as associated data: a ciphertext moved to another row does not decrypt. */
export function encryptPrivateKey(kek: Buffer, kid: string, pkcs8: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(kid, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(pkcs8), cipher.final()]);
  return [ENCRYPTION_VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

function refused(reason: (typeof RECEIPT_FAILURES)[number], detail: string): ReceiptVerification {
  return { valid: false, reason, detail };
}

/** A configuration error: this process was given another key-encryption key than the stored key was made under. */
export class UndecryptableKey extends ConfigError {
  constructor(kid: string) {
    super(
      `the receipt signing key ${kid} in the database cannot be decrypted with this process's key-encryption key: ` +
        'every process on one database needs the same receipt_key_encryption_key (or, with it empty, the same data_dir); ' +
        'if the one it was made with is lost, `greenlight keys rotate` makes a new key under this one',
    );
    this.name = 'UndecryptableKey';
  }
}

export function decryptPrivateKey(kek: Buffer, kid: string, stored: string): KeyObject {
  const [version, iv, tag, ciphertext] = stored.split('.');
  if (version !== ENCRYPTION_VERSION || !iv || !tag || ciphertext === undefined) throw new UndecryptableKey(kid);
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const pkcs8 = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
    return createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  } catch {
    throw new UndecryptableKey(kid);
  }
}

/** A new key pair as stored, its kid the public key's JWK thumbprint (RFC 7638). */
export async function newReceiptKey(kek: Buffer, now: number): Promise<Omit<StoredReceiptKey, 'current' | 'retired_at'>> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' }) as { x: string };
  const kid = await (await loadJose()).calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
  const jwk: ReceiptJwk = { kty: 'OKP', crv: 'Ed25519', x, kid, alg: RECEIPT_ALGORITHM, use: 'sig' };
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return { kid, public_jwk: JSON.stringify(jwk), private_key: encryptPrivateKey(kek, kid, pkcs8), created_at: now };
}

export const RECEIPT_FAILURES = ['signature', 'expired', 'malformed', 'nothing_to_run', 'action_mismatch'] as const;

/** What `POST /receipts/verify` answers: the claims of a receipt that allows the action, or why it does not. */
export type ReceiptVerification =
  | { valid: true; reason: null; detail: null; claims: ReceiptClaims }
  | { valid: false; reason: (typeof RECEIPT_FAILURES)[number]; detail: string };

/** One key as `greenlight keys` reports it. */
export interface ReceiptKeySummary {
  kid: string;
  current: boolean;
  created_at: string;
  retired_at: string | null;
}

/** Signing receipts with the current key, making the first, rotating, listing the public halves. */
export class ReceiptKeys implements ReceiptSigner {
  /** Decrypted private keys by kid: a rotation in another process is seen at the next signature. */
  private readonly privateKeys = new Map<string, KeyObject>();

  constructor(
    private readonly rows: ReceiptKeyRows,
    private readonly kek: Buffer,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * At start: the first key when there is none (of two processes racing, one makes it and the
   * other uses it), and a check that this process can decrypt the current one, so a wrong
   * key-encryption key stops the start instead of every decision.
   */
  async ensureCurrent(): Promise<void> {
    if (!(await this.rows.current())) await this.rows.makeCurrent(await newReceiptKey(this.kek, this.clock()), false);
    const current = await this.rows.current();
    if (!current) throw new Error('no current receipt signing key after making one');
    this.privateKeyOf(current);
  }

  /** Makes a new key current; the earlier ones stay listed, so their receipts still verify. */
  async rotate(): Promise<ReceiptKeySummary> {
    const key = await newReceiptKey(this.kek, this.clock());
    if (!(await this.rows.makeCurrent(key, true))) throw new Error('another rotation made a key current at the same moment; run it again if you want one more');
    return { kid: key.kid, current: true, created_at: new Date(key.created_at).toISOString(), retired_at: null };
  }

  async list(): Promise<ReceiptKeySummary[]> {
    return (await this.rows.all()).map((row) => ({
      kid: row.kid,
      current: row.current,
      created_at: new Date(row.created_at).toISOString(),
      retired_at: row.retired_at === null ? null : new Date(row.retired_at).toISOString(),
    }));
  }

  /** The JWK Set: every public key, the current one first. */
  async jwks(): Promise<{ keys: ReceiptJwk[] }> {
    return { keys: (await this.rows.all()).map((row) => JSON.parse(row.public_jwk) as ReceiptJwk) };
  }

  async sign(tx: Tx, claims: ReceiptClaims): Promise<string> {
    const current = await this.rows.current(tx);
    if (!current) throw new Error('no current receipt signing key');
    const { SignJWT } = await loadJose();
    return new SignJWT({ ...claims } as unknown as Record<string, unknown>)
      .setProtectedHeader({ alg: RECEIPT_ALGORITHM, kid: current.kid, typ: 'JWT' })
      .sign(this.privateKeyOf(current));
  }

  /**
   * Whether `receipt` allows `action`: signed by one of these keys, unexpired, and naming the
   * SHA-256 of exactly that text. The check every client makes offline, for a caller that
   * cannot (or wants a second opinion from the server that signed).
   */
  async verify(receipt: string, action: string): Promise<ReceiptVerification> {
    const { createLocalJWKSet, errors, jwtVerify } = await loadJose();
    let claims: ReceiptClaims;
    try {
      const verified = await jwtVerify(receipt, createLocalJWKSet(await this.jwks()), {
        algorithms: [RECEIPT_ALGORITHM],
        currentDate: new Date(this.clock()),
        requiredClaims: ['iss', 'sub', 'iat', 'exp', 'jti'],
      });
      claims = verified.payload as unknown as ReceiptClaims;
    } catch (error) {
      if (error instanceof errors.JWTExpired) return refused('expired', 'the receipt has expired: the decision is too old to act on');
      if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
        return refused('signature', "the receipt was not signed by this server's keys (or was changed after signing)");
      }
      return refused('malformed', `the receipt is not valid: ${(error as Error).message}`);
    }
    if (typeof claims.action_sha256 !== 'string') return refused('nothing_to_run', `the receipt records a ${claims.decision_type}: it allows no action`);
    if (actionSha256(action) !== claims.action_sha256) return refused('action_mismatch', 'the action is not the one the decision was made on');
    return { valid: true, reason: null, detail: null, claims };
  }

  private privateKeyOf(row: Pick<StoredReceiptKey, 'kid' | 'private_key'>): KeyObject {
    let key = this.privateKeys.get(row.kid);
    if (!key) {
      key = decryptPrivateKey(this.kek, row.kid, row.private_key);
      this.privateKeys.set(row.kid, key);
    }
    return key;
  }
}
