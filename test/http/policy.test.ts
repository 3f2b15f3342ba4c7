import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

const routing = compilePolicy({
  rules: [
    { name: 'confident-tagging', priority: 100, conditions: { task_type: 'tag', confidence_score: { operator: '>=', value: 0.98 } }, auto_decide: 'approve' },
    {
      name: 'large-refunds',
      priority: 10,
      conditions: { task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 } },
      assign_to: 'finance-lead@example.com',
      assign_to_team: 'finance',
    },
  ],
  default_reviewers: ['ana@example.com', 'ben@example.com'],
});

describe('routing rules', () => {
  it('assigns a review that matches an assign rule, naming the rule', async () => {
    server = await startTestServer({ routing });
    const created = await call(server.url, 'POST', '/reviews', { ...sampleReview, metadata: { amount: 2500 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'pending', assigned_to: 'finance-lead@example.com', assigned_team: 'finance', routing_rule: 'large-refunds' });
    const listed = await call(server.url, 'GET', '/reviews?assigned_to=finance-lead@example.com');
    expect(listed.body.reviews.map((r: { id: number }) => r.id)).toEqual([created.body.id]);
  });

  it('gives reviews no rule matched to the least busy default reviewer', async () => {
    server = await startTestServer({ routing });
    const assignees: string[] = [];
    for (let i = 0; i < 4; i += 1) assignees.push((await call(server.url, 'POST', '/reviews', sampleReview)).body.assigned_to);
    expect(assignees).toEqual(['ana@example.com', 'ben@example.com', 'ana@example.com', 'ben@example.com']);
    const first = (await call(server.url, 'GET', '/reviews?assigned_to=ana@example.com')).body.reviews[0];
    await call(server.url, 'POST', `/reviews/${first.id}/decide`, { decision_type: 'approve' });
    // ana now has one pending review, ben two.
    expect((await call(server.url, 'POST', '/reviews', sampleReview)).body).toMatchObject({ assigned_to: 'ana@example.com', routing_rule: null });
  });

  it('lets an auto-approve rule answer a blocking create at once, as an ordinary decision', async () => {
    server = await startTestServer({ routing });
    const started = Date.now();
    const created = await call(server.url, 'POST', '/reviews', { task_type: 'tag', proposed_action: 'Tag ticket 5 as billing', confidence_score: 0.99, blocking: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'approved',
      routing_rule: 'confident-tagging',
      expires_at: null,
      decision: { decision_type: 'approve', reviewer_name: 'rule:confident-tagging', notes: "Decided automatically by the routing rule 'confident-tagging'." },
    });
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}/decision`)).body.reviewer_name).toBe('rule:confident-tagging');
    expect((await call(server.url, 'GET', '/stats')).body).toMatchObject({ approved_reviews: 1, pending_reviews: 0 });
    // Below the threshold, the same task waits for a person.
    const unsure = await call(server.url, 'POST', '/reviews', { task_type: 'tag', proposed_action: 'Tag ticket 6', confidence_score: 0.5 });
    expect(unsure.body).toMatchObject({ status: 'pending', decision: null });
  });

  it('routes nothing while the policy is switched off', async () => {
    server = await startTestServer({ routing: { ...routing, enabled: false } });
    const created = await call(server.url, 'POST', '/reviews', { task_type: 'tag', proposed_action: 'Tag ticket 5', confidence_score: 0.99 });
    expect(created.body).toMatchObject({ status: 'pending', assigned_to: null, routing_rule: null });
  });
});

describe('expiry', () => {
  it('gives a blocking create the fail-safe decision when the limit passes, and long-polls get it too', async () => {
    server = await startTestServer({ routing: compilePolicy({ expiry: { critical: 1 } }) });
    const agent = call(server.url, 'POST', '/reviews', { ...sampleReview, urgency: 'critical', blocking: true });
    // The page, not the total: the two are read one after the other, and the expiry may fall between.
    let pending = await call(server.url, 'GET', '/reviews?status=pending');
    while (pending.body.reviews.length === 0) pending = await call(server.url, 'GET', '/reviews?status=pending');
    // A review of another urgency has no limit.
    const unlimited = await call(server.url, 'POST', '/reviews', { ...sampleReview, urgency: 'high' });
    expect(unlimited.body.expires_at).toBeNull();
    const answered = await agent;
    expect(answered.status).toBe(201);
    expect(answered.body).toMatchObject({
      status: 'rejected',
      decision: {
        decision_type: 'reject',
        reviewer_name: 'policy:expired',
        notes: 'Expired: no reviewer decided within 1 s (the limit for critical urgency), so the policy rejected it (on_expiry: reject).',
      },
    });
    const expiresAt = Date.parse(answered.body.expires_at);
    expect(expiresAt - Date.parse(answered.body.created_at)).toBe(1_000);
    expect(Date.parse(answered.body.decided_at)).toBeGreaterThanOrEqual(expiresAt);
    expect(pending.body.reviews.map((r: { expires_at: string }) => r.expires_at)).toEqual([answered.body.expires_at]);
    expect((await call(server.url, 'GET', `/reviews/${unlimited.body.id}`)).body.status).toBe('pending');
  });

  it('approves instead when on_expiry says so', async () => {
    server = await startTestServer({ routing: compilePolicy({ expiry: { low: '1s' }, on_expiry: 'approve' }) });
    const created = await call(server.url, 'POST', '/reviews', { ...sampleReview, urgency: 'low' });
    const decision = await call(server.url, 'GET', `/reviews/${created.body.id}/decision?wait=10`);
    expect(decision.body).toMatchObject({ decision_type: 'approve', reviewer_name: 'policy:expired' });
  });

  it('expires at start-up a review whose time ran out while the server was down', async () => {
    const data = makeTempDir('greenlight-expiry-');
    const config = { data_dir: data.dir, database_url: `sqlite:${path.join(data.dir, 'greenlight.db')}`, routing: compilePolicy({ expiry: { medium: 1 } }) };
    try {
      const first = await startTestServer(config);
      const created = await call(first.url, 'POST', '/reviews', sampleReview);
      await first.close();
      await new Promise((resolve) => setTimeout(resolve, 1_200));

      server = await startTestServer(config);
      // Expired before the server answered its first request.
      const review = (await call(server.url, 'GET', `/reviews/${created.body.id}`)).body;
      expect(review).toMatchObject({ status: 'rejected', decision: { reviewer_name: 'policy:expired' } });
    } finally {
      data.remove();
    }
  });

  it('lets a person decide before the limit; the expiry then leaves the decision alone', async () => {
    server = await startTestServer({ routing: compilePolicy({ expiry: { medium: 1 } }) });
    const created = await call(server.url, 'POST', '/reviews', sampleReview);
    await call(server.url, 'POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve', reviewer_name: 'dana' });
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    expect((await call(server.url, 'GET', `/reviews/${created.body.id}/decision`)).body).toMatchObject({ decision_type: 'approve', reviewer_name: 'dana' });
  });
});
