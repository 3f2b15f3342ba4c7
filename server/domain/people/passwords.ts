import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import COMMON_PASSWORDS from './common-passwords.json';
import { invalidInput } from '../shared/errors';

/** scrypt's work factors: N (CPU and memory), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * scrypt's cost, one of the settings OWASP's password storage guidance lists as equal in
 * strength (N=2^15, r=8, p=3): 32 MiB at a time rather than the 128 MiB of N=2^17, p=1, so that
 * sign-ins at once do not swell the server. Each hash records its cost: it can be raised later
 * without anyone resetting a password.
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 3 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 128 * cost.N * cost.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function encoded(cost: ScryptCost, salt: Buffer, key: Buffer): string {
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** How passwords are hashed and checked. */
export interface PasswordHashing {
  /** `scrypt$N$r$p$salt$key`, salt and key in base64url. */
  hash(password: string): Promise<string>;
  /** Whether `password` is the one `stored` was made from (at the cost it records); a malformed hash matches nothing. */
  verify(password: string, stored: string): Promise<boolean>;
  /**
   * A hash no password matches, checked when nobody has the e-mail given: signing in takes as
   * long for an unknown address as for a wrong password, so timing does not tell which it was.
   */
  readonly nobodysHash: string;
}

/**
 * Hashing at `cost`: PASSWORD_COST, but for the tests, which sign people in by the hundred and
 * prove nothing about scrypt's cost by paying it.
 */
export function passwordHashing(cost: ScryptCost = PASSWORD_COST): PasswordHashing {
  return {
    async hash(password) {
      const salt = randomBytes(SALT_BYTES);
      return encoded(cost, salt, await derive(password, salt, cost));
    },
    async verify(password, stored) {
      const [scheme, N, r, p, salt, key] = stored.split('$');
      if (scheme !== 'scrypt' || !salt || !key) return false;
      const expected = Buffer.from(key, 'base64url');
      const derived = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(N), r: Number(r), p: Number(p) });
      return derived.length === expected.length && timingSafeEqual(derived, expected);
    },
    nobodysHash: encoded(cost, Buffer.alloc(SALT_BYTES), Buffer.alloc(KEY_BYTES)),
  };
}

/**
 * The 400 most common passwords of 10 characters or more (the shortest accepted) among the 10
 * million that Mark Burnett gathered from breach dumps (xato.net, 2015), as zxcvbn ranks them:
 * the first any guesser tries. Lowercased.
 */
const COMMON = new Set<string>(COMMON_PASSWORDS);

const BETTER = 'choose another: a few words in a row are easy to remember and hard to guess';

/**
 * Refuses (400) a new password that guessing finds first: one character repeated, or one of
 * the common passwords in any case. Failed sign-ins are limited per client rather than per
 * account, so a password must hold out against many clients' few tries each.
 */
export function refuseGuessablePassword(password: string): void {
  if (/^(.)\1*$/su.test(password)) throw invalidInput('password', `is one character repeated, which is guessed at once; ${BETTER}`);
  if (COMMON.has(password.toLowerCase())) throw invalidInput('password', `is one of the most common passwords, which are guessed first; ${BETTER}`);
}
