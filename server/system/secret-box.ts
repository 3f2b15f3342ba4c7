import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Secrets at rest, sealed with AES-256-GCM: `v1:` and the base64 of a random 12-byte IV, the
 * 16-byte tag and the ciphertext. `context` (say, the organization a token belongs to) is
 * authenticated with it, so a sealed value moved to another row does not open there.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(base64Key: string) {
    this.key = Buffer.from(base64Key, 'base64');
    if (this.key.length !== 32) throw new Error('a SecretBox key is 32 bytes');
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  /** Throws when the value was not sealed with this key and context, or was altered. */
  open(sealed: string, context: string): string {
    const [version, body] = sealed.split(':');
    if (version !== VERSION || !body) throw new Error('not a sealed value');
    const bytes = Buffer.from(body, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  }
}
