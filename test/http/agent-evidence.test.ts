import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../support/event-stream';
import { attach } from '../support/seed';
import { call, eventually, expectProblem, sampleReview, startTestServer, type TestServer } from '../support/server';

/**
 * What an agent key may do to the evidence behind a decision (hosted edition): a key bound to an
 * agent reaches that agent's reviews alone, and no agent key changes the attachments of a
 * review once it is decided.
 */

const OPERATOR_KEY = 'operator-key-for-evidence-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let server: TestServer;
let admin: Record<string, string>;
/** A key of the organization that belongs to no agent. */
let agentKey: Record<string, string>;
/** Keys bound to the registered agents "refunds" and "deploys". */
let refunds: { id: number; key: Record<string, string> };
let deploys: { id: number; key: Record<string, string> };
let reviewerId: number;

async function boundAgent(organizationId: number, name: string): Promise<{ id: number; key: Record<string, string> }> {
  const agent = await call(server.url, 'POST', '/agents', { name }, { headers: admin });
  const key = await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: `${name} key`, scope: 'agent', agent_id: agent.body.id }, { headers: admin });
  expect(key.status).toBe(201);
  return { id: agent.body.id, key: bearer(key.body.key) };
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  const created = await call(server.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
  admin = bearer(created.body.api_key.key);
  const organizationId = created.body.organization.id;
  agentKey = bearer((await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: 'any agent', scope: 'agent' }, { headers: admin })).body.key);
  refunds = await boundAgent(organizationId, 'refunds');
  deploys = await boundAgent(organizationId, 'deploys');
  reviewerId = (await call(server.url, 'POST', '/users', { email: 'reviewer@acme.example', name: 'Acme Reviewer', role: 'reviewer' }, { headers: admin })).body.id;
});
afterAll(() => server?.dispose());

async function fileReview(headers: Record<string, string>, action = sampleReview.proposed_action): Promise<number> {
  const filed = await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: action }, { headers });
  expect(filed.status).toBe(201);
  return filed.body.id;
}

async function upload(reviewId: number, headers: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const form = new FormData();
  form.append('file', new Blob(['receipt 1042']), 'receipt.txt');
  const response = await fetch(`${server.url}/reviews/${reviewId}/attachments`, { method: 'POST', body: form, headers });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function approve(reviewId: number): Promise<void> {
  expect((await call(server.url, 'POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve', reviewer_id: reviewerId }, { headers: admin })).status).toBe(200);
}

describe("a key bound to an agent reaches that agent's reviews alone", () => {
  it("finds another agent's review, its feedback and its attachments not found, and changes none of them", async () => {
    const theirs = await fileReview(deploys.key, 'Deploy api-gateway v2.14.0');
    const mine = await fileReview(refunds.key, 'Refund order 1042');
    const attachment = await attach(server.url, theirs, 'deploy plan', 'plan.txt', 'text/plain', undefined, deploys.key);
    expect((await call(server.url, 'POST', `/reviews/${theirs}/feedback`, { rating: 5 }, { headers: deploys.key })).status).toBe(201);

    const reads = [
      `/reviews/${theirs}`,
      `/reviews/${theirs}/decision`,
      `/reviews/${theirs}/decision?wait=1`,
      `/reviews/${theirs}/feedback`,
      `/reviews/${theirs}/attachments`,
      `/attachments/${attachment.id}`,
      `/attachments/${attachment.id}/download`,
    ];
    for (const read of reads) expectProblem(await call(server.url, 'GET', read, undefined, { headers: refunds.key }), 404);
    expectProblem(await call(server.url, 'POST', `/reviews/${theirs}/feedback`, { rating: 1, comment: 'not mine to judge' }, { headers: refunds.key }), 404);
    expectProblem(await upload(theirs, refunds.key), 404);
    expectProblem(await call(server.url, 'DELETE', `/attachments/${attachment.id}`, undefined, { headers: refunds.key }), 404);

    const listed = await call(server.url, 'GET', '/reviews', undefined, { headers: refunds.key });
    expect(listed.body.reviews.map((review: { id: number }) => review.id)).toEqual([mine]);
    expect(listed.body.total).toBe(1);
    const filtered = await call(server.url, 'GET', `/reviews?agent_id=${deploys.id}`, undefined, { headers: refunds.key });
    expect(filtered.body).toMatchObject({ reviews: [], total: 0 });

    expect((await call(server.url, 'GET', `/reviews/${theirs}/attachments`, undefined, { headers: deploys.key })).body.count).toBe(1);
    expect((await call(server.url, 'GET', `/reviews/${theirs}/feedback`, undefined, { headers: deploys.key })).body.count).toBe(1);
    const seenByAdmin = await call(server.url, 'GET', '/reviews', undefined, { headers: admin });
    expect(seenByAdmin.body.reviews.map((review: { id: number }) => review.id)).toEqual(expect.arrayContaining([theirs, mine]));
  });

  it("streams only the events of that agent's reviews, live and when resuming", async () => {
    const stream = await subscribe(server.url, { headers: refunds.key });
    try {
      const theirs = await fileReview(deploys.key, 'Deploy billing v3');
      await attach(server.url, theirs, 'deploy plan', 'plan.txt', 'text/plain', undefined, deploys.key);
      const mine = await fileReview(refunds.key, 'Refund order 2077');
      await eventually(() => stream.events.some((event) => event.data.id === mine), 5_000, "the bound agent's own review");
      expect(stream.events.map((event) => [event.event, event.data.id])).toEqual([['review.created', mine]]);

      const resumed = await subscribe(server.url, { headers: { ...refunds.key, 'last-event-id': '0' } });
      const marker = await fileReview(refunds.key, 'Refund order 2078');
      await eventually(() => resumed.events.some((event) => event.data.id === marker), 5_000, 'the marker');
      resumed.close();
      expect(resumed.events.every((event) => event.data.id !== theirs && event.data.review_id !== theirs)).toBe(true);
    } finally {
      stream.close();
    }
  });
});

describe('the evidence of a decided review, as agent keys see it', () => {
  it('is fixed: an agent key can neither add nor delete its attachments (409), and they stay as decided on', async () => {
    const reviewId = await fileReview(refunds.key);
    const evidence = await attach(server.url, reviewId, 'receipt', 'receipt.txt', 'text/plain', undefined, refunds.key);
    await approve(reviewId);

    for (const key of [refunds.key, agentKey]) {
      expectProblem(await upload(reviewId, key), 409, /decided \(approved\).*evidence.*fixed/);
      expectProblem(await call(server.url, 'DELETE', `/attachments/${evidence.id}`, undefined, { headers: key }), 409, /decided \(approved\)/);
    }
    const listed = await call(server.url, 'GET', `/reviews/${reviewId}/attachments`, undefined, { headers: admin });
    expect(listed.body.attachments.map((attachment: { id: number }) => attachment.id)).toEqual([evidence.id]);
    expect((await fetch(`${server.url}/attachments/${evidence.id}/download`, { headers: admin })).status).toBe(200);
  });

  it('stays in the hands of admins, whose changes the audit log records', async () => {
    const reviewId = await fileReview(agentKey);
    const evidence = await attach(server.url, reviewId, 'a customer\'s card number, uploaded by mistake', 'card.txt', 'text/plain', undefined, agentKey);
    await approve(reviewId);
    expect((await call(server.url, 'DELETE', `/attachments/${evidence.id}`, undefined, { headers: admin })).status).toBe(204);
    expect((await upload(reviewId, admin)).status).toBe(201);
    const audit = await call(server.url, 'GET', `/audit-logs?action=attachment.deleted&target_id=${evidence.id}`, undefined, { headers: admin });
    expect(audit.body.entries).toHaveLength(1);
  });

  it('refuses an upload that was streaming in when the decision landed, and keeps none of its bytes', async () => {
    const reviewId = await fileReview(refunds.key);
    const incoming = path.join(server.dataDir, 'attachments', '.incoming');
    const boundary = 'evidence-boundary';
    const request = http.request(`${server.url}/reviews/${reviewId}/attachments`, {
      method: 'POST',
      headers: { ...refunds.key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const answer = new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      });
      request.on('error', reject);
    });
    request.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.txt"\r\nContent-Type: text/plain\r\n\r\nthe first bytes`);
    // Past the early check: the server is writing the file to disk.
    await eventually(() => fs.existsSync(incoming) && fs.readdirSync(incoming).length > 0, 10_000, 'the upload to reach the disk');
    await approve(reviewId);
    request.end(` and the last\r\n--${boundary}--\r\n`);

    expectProblem(await answer, 409, /decided \(approved\)/);
    expect((await call(server.url, 'GET', `/reviews/${reviewId}/attachments`, undefined, { headers: admin })).body.count).toBe(0);
    expect(fs.readdirSync(incoming)).toEqual([]);
    expect(fs.existsSync(path.join(server.dataDir, 'attachments', String(reviewId))) ? fs.readdirSync(path.join(server.dataDir, 'attachments', String(reviewId))) : []).toEqual([]);
  });
});

// Last: the review it files would count among the bound agent's in the tests above.
describe('a review filed with its files by an agent key', () => {
  it("is that bound agent's, with its files, which another agent's key cannot read", async () => {
    const form = new FormData();
    form.append('review', JSON.stringify(sampleReview));
    form.append('file', new Blob(['receipt 1042'], { type: 'text/plain' }), 'receipt.txt');
    const response = await fetch(`${server.url}/reviews`, { method: 'POST', body: form, headers: refunds.key });
    const filed = await response.json();

    expect(response.status).toBe(201);
    expect(filed.agent_id).toBe(refunds.id);
    // This review's files alone, though the agent has others on earlier reviews.
    expect(filed.attachments).toEqual([expect.objectContaining({ file_name: 'receipt.txt', review_id: filed.id })]);
    expectProblem(await call(server.url, 'GET', `/reviews/${filed.id}/attachments`, undefined, { headers: deploys.key }), 404);
    expect((await call(server.url, 'GET', `/reviews/${filed.id}/attachments`, undefined, { headers: admin })).body.count).toBe(1);
  });

  it("lists a review's own attachments and feedback to its agent's key, not those of the agent's other reviews", async () => {
    const [first, second] = [await fileReview(refunds.key), await fileReview(refunds.key)];
    for (const reviewId of [first, second]) {
      expect((await upload(reviewId, refunds.key)).status).toBe(201);
      expect((await call(server.url, 'POST', `/reviews/${reviewId}/feedback`, { comment: `on ${reviewId}` }, { headers: refunds.key })).status).toBe(201);
    }
    const attachments = await call(server.url, 'GET', `/reviews/${first}/attachments`, undefined, { headers: refunds.key });
    expect(attachments.body.attachments.map((a: { review_id: number }) => a.review_id)).toEqual([first]);
    const feedback = await call(server.url, 'GET', `/reviews/${first}/feedback`, undefined, { headers: refunds.key });
    expect(feedback.body.feedback.map((f: { review_id: number }) => f.review_id)).toEqual([first]);
  });
});
