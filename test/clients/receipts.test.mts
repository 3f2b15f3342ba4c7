import { createHash } from 'node:crypto';
import { GreenlightClient, ReceiptError, ToolCallReviewer, verifyReceipt } from '@greenlight/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, pendingReviewOf } from '../support/client.mjs';
import { checkWithNodeCrypto, type Jwks, tampered } from '../support/receipts.js';
import { startRewritingProxy } from '../support/rewriting-proxy.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

// The TypeScript client's verifyReceipt, and the tool-call reviewer every adapter and the
// Claude Code hook go through, against real servers on loopback.

let server: TestServer;
let jwks: Jwks;

async function decided(action: string, decision: Record<string, unknown>, on: TestServer = server): Promise<{ id: number; receipt: string }> {
  const review = await call(on.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: action });
  const answer = await call(on.url, 'POST', `/reviews/${review.body.id}/decide`, { reviewer_name: 'dana', ...decision });
  expect(answer.status).toBe(200);
  return { id: review.body.id, receipt: answer.body.receipt };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ReceiptError);
  return (error as ReceiptError).reason;
}

beforeAll(async () => {
  server = await startTestServer();
  jwks = (await call(server.url, 'GET', '/.well-known/jwks.json')).body;
});
afterAll(() => server?.dispose());

describe('verifyReceipt', () => {
  it('accepts the approved action, offline with a fetched key set or with the server\'s URL, and refuses any other action', async () => {
    const action = 'Refund order 1042 (EUR 1,250.00)';
    const { id, receipt } = await decided(action, { decision_type: 'approve' });
    const offline = await verifyReceipt(receipt, action, { jwks, reviewId: id });
    expect(offline).toMatchObject({ sub: String(id), decision_type: 'approve', action_sha256: createHash('sha256').update(action).digest('hex') });
    expect(await verifyReceipt(receipt, action, { serverUrl: server.url })).toEqual(offline);
    expect(await failure(verifyReceipt(receipt, 'Refund order 1042 (EUR 12,500.00)', { jwks }))).toBe('action_mismatch');
    expect(await failure(verifyReceipt(receipt, `${action} `, { jwks }))).toBe('action_mismatch');
    expect(await failure(verifyReceipt(receipt, action, { jwks, reviewId: id + 1 }))).toBe('wrong_review');
  });

  it('binds a modification to the modified action, and lets a rejection run nothing', async () => {
    const modified = await decided('Refund EUR 250', { decision_type: 'modify', modified_action: 'Refund EUR 125' });
    expect((await verifyReceipt(modified.receipt, 'Refund EUR 125', { jwks })).decision_type).toBe('modify');
    expect(await failure(verifyReceipt(modified.receipt, 'Refund EUR 250', { jwks }))).toBe('action_mismatch');
    const rejected = await decided('Refund EUR 9,999', { decision_type: 'reject' });
    expect(await failure(verifyReceipt(rejected.receipt, 'Refund EUR 9,999', { jwks }))).toBe('nothing_to_run');
    expect(await failure(verifyReceipt(null, 'Refund EUR 1', { jwks }))).toBe('missing');
  });

  it('refuses a changed payload and another server\'s signature', async () => {
    const { receipt } = await decided('Refund EUR 5', { decision_type: 'reject' });
    const forged = tampered(receipt, { decision_type: 'approve', action_sha256: createHash('sha256').update('Refund EUR 5').digest('hex') });
    expect(await failure(verifyReceipt(forged, 'Refund EUR 5', { jwks }))).toBe('signature');
    const other = await startTestServer();
    try {
      const theirs = await decided('Refund EUR 5', { decision_type: 'approve' }, other);
      expect(await failure(verifyReceipt(theirs.receipt, 'Refund EUR 5', { jwks }))).toBe('signature');
      expect(await failure(verifyReceipt(theirs.receipt, 'Refund EUR 5', { serverUrl: server.url }))).toBe('signature');
    } finally {
      await other.dispose();
    }
  });

  it('refuses a receipt past its exp, though its signature holds', async () => {
    // A server whose decisions were made two hours ago: their receipts expired after ten minutes.
    const past = await startTestServer({}, { clock: () => Date.now() - 2 * 3600_000 });
    try {
      const { receipt } = await decided('Refund EUR 7', { decision_type: 'approve' }, past);
      const keys = (await call(past.url, 'GET', '/.well-known/jwks.json')).body as Jwks;
      expect(checkWithNodeCrypto(receipt, keys)).not.toBeNull();
      expect(await failure(verifyReceipt(receipt, 'Refund EUR 7', { jwks: keys }))).toBe('expired');
    } finally {
      await past.dispose();
    }
  });
});

describe('the tool-call reviewer (every adapter, and the Claude Code hook)', () => {
  it('runs an edit whose receipt matches, and refuses one changed on the way', async () => {
    const honest = new ToolCallReviewer(new GreenlightClient({ baseUrl: server.url }), { framework: 'receipt-test' });
    const edited = honest.review({ toolName: 'refund', input: { order: 1042, amount: 250 } });
    await decide(server.url, await pendingReviewOf(server.url, 'receipt-test:refund'), { decision_type: 'modify', modified_action: '{"order": 1042, "amount": 125}' });
    expect(await edited).toMatchObject({ outcome: 'edit', input: { order: 1042, amount: 125 } });

    // Someone between the agent and Greenlight raises the refund in the decision it reads.
    const proxy = await startRewritingProxy(server.url, (body) => {
      if (body?.decision?.modified_action) body.decision.modified_action = '{"order": 1042, "amount": 125000}';
      return body;
    });
    try {
      const fooled = new ToolCallReviewer(new GreenlightClient({ baseUrl: proxy.url }), { framework: 'receipt-proxied' });
      const outcome = fooled.review({ toolName: 'refund', input: { order: 7, amount: 250 } });
      await decide(server.url, await pendingReviewOf(server.url, 'receipt-proxied:refund'), { decision_type: 'modify', modified_action: '{"order": 7, "amount": 125}' });
      const refused = await outcome;
      expect(refused.outcome).toBe('reject');
      expect(refused.message).toMatch(/^Not run: Greenlight review #\d+ was decided, but the action about to run is not the one the decision was made on\.$/);
    } finally {
      await proxy.close();
    }
  });

  it('refuses an approval whose receipt is another review\'s', async () => {
    const other = await decided('{\n  "order": 1\n}', { decision_type: 'approve' });
    const proxy = await startRewritingProxy(server.url, (body) => {
      if (body?.decision?.receipt) body.decision.receipt = other.receipt;
      return body;
    });
    try {
      const fooled = new ToolCallReviewer(new GreenlightClient({ baseUrl: proxy.url }), { framework: 'receipt-swapped' });
      const outcome = fooled.review({ toolName: 'refund', input: { order: 1 } });
      await decide(server.url, await pendingReviewOf(server.url, 'receipt-swapped:refund'), { decision_type: 'approve' });
      expect(await outcome).toMatchObject({ outcome: 'reject', message: expect.stringMatching(/the receipt is about review \d+, not \d+/) });
    } finally {
      await proxy.close();
    }
  });
});
