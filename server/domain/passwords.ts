import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import COMMON_PASSWORDS from './common-passwords.json';
import { invalidInput } from './errors';

/**
 * scrypt's cost, one of the settings OWASP's password storage guidance lists as equal in
 * strength (N=2^15, r=8, p=3): 32 MiB at a time rather than the 128 MiB of N=2^17, p=1, so that
 * sign-ins at once do not swell the server. Each hash records its cost: it can be raised later
 * without anyone resetting a password.
 */
const COST = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 128 * cost.N * cost.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` is the one `stored` was made from; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const derived = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(N), r: Number(r), p: Number(p) });
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}

/**
 * A hash no password matches, checked when nobody has the e-mail given: signing in takes as
 * long for an unknown address as for a wrong password, so timing does not tell which it was.
 */
export const NOBODYS_PASSWORD_HASH = ['scrypt', COST.N, COST.r, COST.p, Buffer.alloc(SALT_BYTES).toString('base64url'), Buffer.alloc(KEY_BYTES).toString('base64url')].join('$');

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
