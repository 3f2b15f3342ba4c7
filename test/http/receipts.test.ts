import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { publicUrlOf } from '../../server/config/settings';
import { call, startTestServer, type TestServer } from '../support/server';
import { checkWithNodeCrypto, type Jwks, sha256Hex, tampered } from '../support/receipts';

const OPERATOR_KEY = 'operator-key-for-receipt-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let server: TestServer;

async function jwksOf(target: TestServer): Promise<Jwks> {
  const answer = await call(target.url, 'GET', '/.well-known/jwks.json');
  expect(answer.status).toBe(200);
  return answer.body;
}

beforeAll(async () => {
  server = await startTestServer({
    enable_auth: true,
    api_key: 'receipts-api-key-0123456789',
    routing: compilePolicy({ rules: [{ name: 'tiny-tags', priority: 100, conditions: { task_type: 'tag' }, auto_decide: 'approve' }] }),
  });
});
afterAll(() => server?.dispose());

const key = { authorization: 'Bearer receipts-api-key-0123456789' };

async function authed(method: string, urlPath: string, body?: unknown) {
  return call(server.url, method, urlPath, body, { headers: key });
}

describe('decision receipts', () => {
  it('are Ed25519 JWS that Node\'s own crypto verifies against the public key set, which is open and cacheable', async () => {
    const response = await fetch(`${server.url}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = (await response.json()) as Jwks;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toEqual({ kty: 'OKP', crv: 'Ed25519', x: expect.stringMatching(/^[\w-]{43}$/), kid: expect.any(String), alg: 'EdDSA', use: 'sig' });
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);

    const action = 'Refund order 1042 (EUR 1,250.00) — “express”';
    const review = await authed('POST', '/reviews', { task_type: 'refund', proposed_action: action });
    const answer = await authed('POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve', reviewer_name: 'dana@example.com' });
    const checked = checkWithNodeCrypto(answer.body.receipt, jwks);
    expect(checked?.header).toEqual({ alg: 'EdDSA', kid: jwks.keys[0].kid, typ: 'JWT' });
    const decidedAt = Math.floor(Date.parse(answer.body.created_at) / 1000);
    expect(checked?.claims).toEqual({
      iss: publicUrlOf(server.config),
      sub: String(review.body.id),
      iat: decidedAt,
      exp: decidedAt + 600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      decision_type: 'approve',
      action_sha256: sha256Hex(action),
      decided_by: ['dana@example.com'],
      votes: [],
    });
  });

  it('are minted once: the decide answer, the review, its decision and a blocking create give the same receipt', async () => {
    const review = await authed('POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 7' });
    const blocking = fetch(`${server.url}/reviews/${review.body.id}/decision?wait=30`, { headers: key }).then((r) => r.json());
    await expect.poll(() => server.test.waitingCount()).toBe(1);
    const answer = await authed('POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve' });
    const receipts = [answer.body.receipt, (await authed('GET', `/reviews/${review.body.id}`)).body.decision.receipt, (await authed('GET', `/reviews/${review.body.id}/decision`)).body.receipt, (await blocking).receipt];
    expect(new Set(receipts).size).toBe(1);

    // A routing rule's decision, answered to the create itself.
    const ruled = await authed('POST', '/reviews', { task_type: 'tag', proposed_action: 'Tag ticket 9 as billing', blocking: true });
    expect(ruled.status).toBe(201);
    const claims = checkWithNodeCrypto(ruled.body.decision.receipt, await jwksOf(server))?.claims;
    expect(claims).toMatchObject({ decision_type: 'approve', action_sha256: sha256Hex('Tag ticket 9 as billing'), decided_by: ['rule:tiny-tags'] });
    expect((await authed('GET', `/reviews/${ruled.body.id}`)).body.decision.receipt).toBe(ruled.body.decision.receipt);
  });

  it('name the modified action\'s hash when modified, and no action when rejected', async () => {
    const jwks = await jwksOf(server);
    const modify = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 250' }, { headers: key });
    const modified = await call(server.url, 'POST', `/reviews/${modify.body.id}/decide`, { decision_type: 'modify', modified_action: 'Refund EUR 125' }, { headers: key });
    const modifiedClaims = checkWithNodeCrypto(modified.body.receipt, jwks)?.claims;
    expect(modifiedClaims).toMatchObject({ decision_type: 'modify', action_sha256: sha256Hex('Refund EUR 125') });
    expect(modifiedClaims?.action_sha256).not.toBe(sha256Hex('Refund EUR 250'));

    const reject = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 9,999' }, { headers: key });
    const rejected = await call(server.url, 'POST', `/reviews/${reject.body.id}/decide`, { decision_type: 'reject', notes: 'no' }, { headers: key });
    const rejectedClaims = checkWithNodeCrypto(rejected.body.receipt, jwks)?.claims;
    expect(rejectedClaims?.decision_type).toBe('reject');
    expect(rejectedClaims).not.toHaveProperty('action_sha256');
    // Each decision its own jti.
    expect(rejectedClaims?.jti).not.toBe(modifiedClaims?.jti);
  });

  it('fail with a changed payload, and under another server\'s key', async () => {
    const review = await authed('POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 1' });
    const { body } = await authed('POST', `/reviews/${review.body.id}/decide`, { decision_type: 'reject' });
    const jwks = await jwksOf(server);
    expect(checkWithNodeCrypto(body.receipt, jwks)).not.toBeNull();
    expect(checkWithNodeCrypto(tampered(body.receipt, { decision_type: 'approve', action_sha256: sha256Hex('Refund EUR 1') }), jwks)).toBeNull();

    const other = await startTestServer();
    try {
      const otherJwks = await jwksOf(other);
      expect(otherJwks.keys[0].kid).not.toBe(jwks.keys[0].kid);
      expect(checkWithNodeCrypto(body.receipt, otherJwks)).toBeNull();
      // The other key under this key's kid: the signature still does not verify.
      expect(checkWithNodeCrypto(body.receipt, { keys: [{ ...otherJwks.keys[0], kid: jwks.keys[0].kid }] })).toBeNull();
    } finally {
      await other.dispose();
    }
  });

  it('are checked by the server that signed them too, for an executor that cannot check Ed25519 itself', async () => {
    const review = await authed('POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 60' });
    const { body } = await authed('POST', `/reviews/${review.body.id}/decide`, { decision_type: 'modify', modified_action: 'Refund EUR 30' });
    const verified = await authed('POST', '/receipts/verify', { receipt: body.receipt, action: 'Refund EUR 30' });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ valid: true, reason: null, detail: null, claims: checkWithNodeCrypto(body.receipt, await jwksOf(server))?.claims });
    const refusals = await Promise.all([
      authed('POST', '/receipts/verify', { receipt: body.receipt, action: 'Refund EUR 60' }),
      authed('POST', '/receipts/verify', { receipt: tampered(body.receipt, { action_sha256: sha256Hex('Refund EUR 60') }), action: 'Refund EUR 60' }),
      authed('POST', '/receipts/verify', { receipt: 'not.a.receipt', action: 'Refund EUR 30' }),
    ]);
    expect(refusals.map((answer) => answer.body.reason)).toEqual(['action_mismatch', 'signature', 'malformed']);
    expect(refusals.every((answer) => answer.body.valid === false && !('claims' in answer.body))).toBe(true);
    expect((await call(server.url, 'POST', '/receipts/verify', { receipt: body.receipt, action: 'Refund EUR 30' })).status).toBe(401);
    expect((await authed('POST', '/receipts/verify', { receipt: body.receipt })).status).toBe(400);
  });

  it('keep the private key encrypted in the database, under a secret made in data_dir when none is set, and refuse to start with another', async () => {
    const own = await startTestServer({ receipt_key_encryption_key: '' });
    try {
      const file = path.join(own.dataDir, 'receipt-key-encryption.key');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const [row] = (await own.test.sequelize.query('SELECT kid, private_key FROM receipt_keys WHERE current_slot = 1'))[0] as Array<{ kid: string; private_key: string }>;
      expect(row.private_key).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      // The PKCS#8 of an Ed25519 key starts with these bytes; the stored text holds none of it.
      expect(Buffer.from(row.private_key.split('.')[3], 'base64url').includes(Buffer.from('302e020100300506032b6570', 'hex'))).toBe(false);
      const review = await call(own.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 3' });
      const answer = await call(own.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve' });
      expect(checkWithNodeCrypto(answer.body.receipt, await jwksOf(own))?.claims.action_sha256).toBe(sha256Hex('Refund EUR 3'));
      await own.close();
      await expect(startTestServer({ data_dir: own.dataDir, database_url: own.config.database_url, receipt_key_encryption_key: `another-secret-${randomUUID()}` })).rejects.toThrow(
        /cannot be decrypted with this process's key-encryption key/,
      );
    } finally {
      await own.dispose();
    }
  });
});

describe('the expiry\'s decision', () => {
  it('carries a receipt naming the policy, and no action when it rejects', async () => {
    const expiring = await startTestServer({ routing: compilePolicy({ expiry: { critical: 1 } }) });
    try {
      const review = await call(expiring.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 40', urgency: 'critical' });
      let decision: any = null;
      await expect.poll(async () => (decision = (await call(expiring.url, 'GET', `/reviews/${review.body.id}/decision`)).body), { timeout: 20_000 }).not.toBeNull();
      const claims = checkWithNodeCrypto(decision.receipt, await jwksOf(expiring))?.claims;
      expect(claims).toMatchObject({ sub: String(review.body.id), decision_type: 'reject', decided_by: ['policy:expired'], votes: [] });
      expect(claims).not.toHaveProperty('action_sha256');
    } finally {
      await expiring.dispose();
    }
  });
});

describe('decision receipts in an organization', () => {
  let hosted: TestServer;
  beforeAll(async () => {
    hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  });
  afterAll(() => hosted?.dispose());

  it('name the organization, the deciding people by id and the workflow\'s votes', async () => {
    const created = await call(hosted.url, 'POST', '/organizations', { name: `Receipts ${randomUUID().slice(0, 8)}`, settings: { require_two_approvals: true } }, { headers: bearer(OPERATOR_KEY) });
    const admin = bearer(created.body.api_key.key);
    const people = await Promise.all(
      ['Ana', 'Ben'].map(async (name) => (await call(hosted.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name, role: 'reviewer' }, { headers: admin })).body.id as number),
    );
    const review = await call(hosted.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 7 (EUR 5,000.00)' }, { headers: admin });
    expect((await call(hosted.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve', reviewer_id: people[0] }, { headers: admin })).status).toBe(202);
    const final = await call(hosted.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'modify', modified_action: 'Refund order 7 (EUR 2,500.00)', reviewer_id: people[1] }, { headers: admin });
    expect(final.status).toBe(200);
    const claims = checkWithNodeCrypto(final.body.receipt, await jwksOf(hosted))?.claims;
    const verified = await call(hosted.url, 'POST', '/receipts/verify', { receipt: final.body.receipt, action: 'Refund order 7 (EUR 2,500.00)' }, { headers: admin });
    expect(verified.body).toEqual({ valid: true, reason: null, detail: null, claims });
    expect(claims).toMatchObject({
      sub: String(review.body.id),
      organization_id: created.body.organization.id,
      decision_type: 'modify',
      action_sha256: sha256Hex('Refund order 7 (EUR 2,500.00)'),
      decided_by: people,
      votes: [
        { user_id: people[0], stage: 0, decision_type: 'approve' },
        { user_id: people[1], stage: 0, decision_type: 'modify' },
      ],
    });
  });
});
