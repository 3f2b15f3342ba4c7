import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningCli, runCli, startCli, stopProgram } from '../support/cli';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';
import { call, TEST_RECEIPT_KEY_ENCRYPTION_KEY } from '../support/server';
import { checkWithNodeCrypto, type Jwks, sha256Hex } from '../support/receipts';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;

beforeAll(() => {
  temp = makeTempDir('greenlight-receipt-keys-');
});
afterAll(() => temp?.remove());

async function decide(api: string, action: string): Promise<string> {
  const review = await call(api, 'POST', '/reviews', { task_type: 'refund', proposed_action: action });
  const decided = await call(api, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve' });
  expect(decided.status).toBe(200);
  return decided.body.receipt;
}

const kidOf = (receipt: string): string => JSON.parse(Buffer.from(receipt.split('.')[0], 'base64url').toString('utf8')).kid;

describe('greenlight keys', () => {
  it('rotate makes a new key current for the running API, and the earlier receipts still verify', { timeout: 60_000 }, async () => {
    const dir = path.join(temp.dir, 'rotate');
    fs.mkdirSync(dir);
    const api = await startCli(['--api-only', '--port', String(await freePort())], { cwd: dir });
    try {
      const before = await decide(api.url, 'Refund EUR 10');
      const rotated = await runCli(['keys', 'rotate'], { cwd: dir });
      expect(rotated.stderr).toBe('');
      expect(rotated.code).toBe(0);
      const newKid = /new current receipt signing key: (\S+)/.exec(rotated.stdout)?.[1];
      expect(newKid).toBeDefined();
      expect(newKid).not.toBe(kidOf(before));

      // The running API reads the current key when it signs: no restart.
      const after = await decide(api.url, 'Refund EUR 20');
      expect(kidOf(after)).toBe(newKid);
      const jwks = (await call(api.url, 'GET', '/.well-known/jwks.json')).body as Jwks;
      expect(jwks.keys.map((key) => key.kid)).toEqual([newKid, kidOf(before)]);
      expect(checkWithNodeCrypto(before, jwks)?.claims.action_sha256).toBe(sha256Hex('Refund EUR 10'));
      expect(checkWithNodeCrypto(after, jwks)?.claims.action_sha256).toBe(sha256Hex('Refund EUR 20'));

      const listed = await runCli(['keys', 'list'], { cwd: dir });
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^${newKid}  current  made `));
      expect(lines[1]).toMatch(new RegExp(`^${kidOf(before)}  retired \\S+  made `));
    } finally {
      await stopProgram(api);
    }
  });
});

describe('a key-encryption key that does not open the current key', () => {
  it('stops the API from starting, until greenlight keys rotate makes a key under the one it has', { timeout: 60_000 }, async () => {
    const dir = path.join(temp.dir, 'lost-secret');
    fs.mkdirSync(dir);
    const first = { GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY: 'the-first-secret-of-this-installation-0123' };
    const second = { GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY: 'a-second-secret-after-the-first-was-lost-99' };
    const made = await runCli(['keys', 'rotate'], { cwd: dir, env: first });
    expect(made.code).toBe(0);

    const refused = await runCli(['start', '--api-only', '--port', String(await freePort())], { cwd: dir, env: second });
    expect(refused.code).toBe(2);
    expect(refused.stdout + refused.stderr).toMatch(/cannot be decrypted with this process's key-encryption key/);
    expect(refused.stdout + refused.stderr).not.toContain(second.GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY);

    expect((await runCli(['keys', 'rotate'], { cwd: dir, env: second })).code).toBe(0);
    const api = await startCli(['--api-only', '--port', String(await freePort())], { cwd: dir, env: second });
    try {
      const receipt = await decide(api.url, 'Refund EUR 30');
      const jwks = (await call(api.url, 'GET', '/.well-known/jwks.json')).body as Jwks;
      expect(jwks.keys).toHaveLength(2);
      expect(checkWithNodeCrypto(receipt, jwks)?.header.kid).toBe(jwks.keys[0].kid);
    } finally {
      await stopProgram(api);
    }
  });
});

/** Several API processes on one PostgreSQL database: only the `postgres` project runs this. */
const onPostgres = TEST_DATABASE_URL !== undefined;

describe('API processes sharing one PostgreSQL database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    if (onPostgres) database = await createTestDatabase({ empty: true });
  });
  afterAll(() => database?.drop());

  it.skipIf(!onPostgres)(`make one key between them when they start together, and sign with it${onPostgres ? '' : ' (PostgreSQL only: skipped on SQLite)'}`, { timeout: 60_000 }, async () => {
    const env = { GREENLIGHT_DATABASE_URL: database.url, GREENLIGHT_RECEIPT_KEY_ENCRYPTION_KEY: TEST_RECEIPT_KEY_ENCRYPTION_KEY };
    const started: RunningCli[] = [];
    try {
      // On a database no process has migrated: both migrate, then race to make the first key.
      const apis = await Promise.all(
        ['a', 'b', 'c'].map(async (name) => {
          const dir = path.join(temp.dir, `shared-${name}`);
          fs.mkdirSync(dir);
          const api = await startCli(['--api-only', '--port', String(await freePort())], { cwd: dir, env });
          started.push(api);
          return api;
        }),
      );
      const sets = await Promise.all(apis.map(async (api) => (await call(api.url, 'GET', '/.well-known/jwks.json')).body as Jwks));
      expect(sets[0].keys).toHaveLength(1);
      expect(sets[1]).toEqual(sets[0]);
      expect(sets[2]).toEqual(sets[0]);
      for (const [index, api] of apis.entries()) {
        const receipt = await decide(api.url, `Refund EUR ${index}`);
        expect(checkWithNodeCrypto(receipt, sets[0])?.claims.action_sha256).toBe(sha256Hex(`Refund EUR ${index}`));
      }
    } finally {
      await Promise.all(started.map((api) => stopProgram(api)));
    }
  });
});
