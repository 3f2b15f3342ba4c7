import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server';
import { seededRandom } from '../support/seeded-random';

const OPERATOR_KEY = 'operator-key-for-auto-decide-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let server: TestServer;

/** The sample's test files and decides some 160 reviews one request after another: more than the default allows for on a loaded machine. */
const SAMPLE_TIMEOUT_MS = 120_000;

async function organization(): Promise<{ admin: Record<string, string>; reviewer: Record<string, string>; reviewerTeam: number }> {
  const created = await call(server.url, 'POST', '/organizations', { name: `Org ${randomUUID().slice(0, 8)}` }, { headers: bearer(OPERATOR_KEY) });
  const admin = bearer(created.body.api_key.key);
  const invited = await call(server.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name: 'Rita Reviewer', role: 'reviewer' }, { headers: admin });
  const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
  const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
  const reviewer = { cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0], 'x-csrf-token': accepted.body.csrf_token };
  const team = await call(server.url, 'POST', '/teams', { name: 'Refunds desk', member_ids: [invited.body.id] }, { headers: admin });
  return { admin, reviewer, reviewerTeam: team.body.id };
}

async function file(admin: Record<string, string>, confidence: number, extra: Record<string, unknown> = {}): Promise<any> {
  const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 1042 (EUR 12.00)', confidence_score: confidence, ...extra }, { headers: admin });
  expect(created.status).toBe(201);
  return created.body;
}

/** P(X ≥ 3) = 4p³ − 3p⁴ for X ~ Bin(4, p): the p where it is 0.05, by bisection, is the bound for 3 of 4. */
function lowerBoundThreeOfFour(): number {
  let low = 0;
  let high = 1;
  for (let i = 0; i < 100; i += 1) {
    const p = (low + high) / 2;
    if (4 * p ** 3 - 3 * p ** 4 < 0.05) low = p;
    else high = p;
  }
  return low;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { random: seededRandom(20261126) });
});
afterAll(() => server?.dispose());

describe('auto-decide routing rules', () => {
  it('in shadow only mark reviews and show how often people agreed; turned to enforce, they decide at creation and a blocking agent is answered at once', async () => {
    const org = await organization();
    const created = await call(
      server.url,
      'POST',
      '/routing-rules',
      { name: 'small refunds', priority: 100, conditions: { confidence_score: { operator: '>=', value: 0.9 } }, action: { auto_decide: 'approve' } },
      { headers: org.admin },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ action: { auto_decide: 'approve' }, mode: 'shadow', audit_sample_rate: 0.05, assign_to_user_id: null, assign_to_team_id: null });
    const ruleId = created.body.id;
    expect((await call(server.url, 'POST', '/routing-rules', { name: 'both', priority: 1, action: { auto_decide: 'approve' }, assign_to_team_id: org.reviewerTeam }, { headers: org.admin })).status).toBe(400);

    const marked = [];
    for (let i = 0; i < 4; i += 1) marked.push(await file(org.admin, 0.95));
    const unmarked = await file(org.admin, 0.4);
    for (const review of marked) expect(review).toMatchObject({ status: 'pending', decision: null, shadow_rule_id: ruleId });
    expect(unmarked.shadow_rule_id).toBeUndefined();
    expect((await call(server.url, 'GET', `/reviews/${marked[0].id}`, undefined, { headers: org.admin })).body.shadow_rule_id).toBe(ruleId);

    for (const [index, review] of marked.entries()) {
      const decided = await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: index === 3 ? 'reject' : 'approve' }, { headers: org.reviewer });
      expect(decided.status).toBe(200);
    }
    const shadow = (await call(server.url, 'GET', `/routing-rules/${ruleId}`, undefined, { headers: org.admin })).body;
    expect(shadow.agreement).toEqual({ decided: 4, agreed: 3, share: 0.75, lower_bound: expect.closeTo(lowerBoundThreeOfFour(), 5), confidence: 0.95, pending: 0 });

    const enforced = await call(server.url, 'PATCH', `/routing-rules/${ruleId}`, { mode: 'enforce', audit_sample_rate: 0 }, { headers: org.admin });
    expect(enforced.body).toMatchObject({ mode: 'enforce', audit_sample_rate: 0 });
    const startedAt = Date.now();
    const blocking = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 7 (EUR 9.00)', confidence_score: 0.97, blocking: true }, { headers: org.admin });
    expect(blocking.status).toBe(201);
    expect(blocking.body).toMatchObject({
      status: 'approved',
      decision: { decision_type: 'approve', reviewer_id: null, reviewer_name: 'rule:small refunds', notes: "Decided automatically by the routing rule 'small refunds'." },
    });
    expect(blocking.body.shadow_rule_id).toBeUndefined();
    expect(Date.parse(blocking.body.decided_at)).toBeGreaterThanOrEqual(startedAt - 1000);

    const audit = (await call(server.url, 'GET', '/audit-logs?limit=500', undefined, { headers: org.admin })).body.entries as Array<{ action: string; target_id: number; data: any; actor: { type: string } }>;
    expect(audit.find((entry) => entry.action === 'routing_rule.enforced')).toMatchObject({ target_id: ruleId, data: { name: 'small refunds', audit_sample_rate: 0 } });
    // Filed by the admin's key; decided by the system, as the rule.
    expect(audit.find((entry) => entry.action === 'review.created' && entry.target_id === blocking.body.id)).toMatchObject({ actor: { type: 'api_key' } });
    expect(audit.find((entry) => entry.action === 'routing_rule.auto_decided')).toMatchObject({ target_id: blocking.body.id, data: { rule: 'small refunds', decision_type: 'approve' }, actor: { type: 'system' } });
    expect(audit.find((entry) => entry.action === 'review.decided' && entry.target_id === blocking.body.id)).toMatchObject({ data: { reviewer_name: 'rule:small refunds' }, actor: { type: 'system' } });
    expect((await call(server.url, 'GET', '/audit-logs/verify', undefined, { headers: org.admin })).body).toMatchObject({ valid: true });

    // An evaluation leaves the auto-decided review out of its population, and counts it apart.
    const suite = (await call(server.url, 'POST', '/evals', { name: 'Refunds' }, { headers: org.admin })).body;
    const result = (await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body.result;
    expect(result.population).toMatchObject({ decided: 4, excluded: { auto_decided: 1, pending: 1 } });
  });

  it('send an audit sample of the rate\'s share to a person, routed by the next rule, and evaluation runs weigh it by 1 / rate', async () => {
    const org = await organization();
    const rule = await call(
      server.url,
      'POST',
      '/routing-rules',
      { name: 'confident', priority: 100, conditions: { confidence_score: { operator: '>=', value: 0.5 } }, action: { auto_decide: 'approve' }, mode: 'enforce', audit_sample_rate: 0.25 },
      { headers: org.admin },
    );
    await call(server.url, 'POST', '/routing-rules', { name: 'refunds desk', priority: 1, assign_to_team_id: org.reviewerTeam }, { headers: org.admin });
    const reviews = [];
    const filed = 120;
    for (let i = 0; i < filed; i += 1) reviews.push(await file(org.admin, 0.8));
    const sampled = reviews.filter((review) => review.audit_sample === true);
    for (const review of sampled) expect(review).toMatchObject({ status: 'pending', audit_rule_id: rule.body.id, assigned_team: 'Refunds desk', decision: null });
    for (const review of reviews.filter((r) => r.audit_sample === undefined)) expect(review).toMatchObject({ status: 'approved', decision: { reviewer_name: 'rule:confident' } });
    // Binomial(120, 0.25): mean 30, standard deviation √22.5 ≈ 4.7; four of them either side.
    expect(sampled.length).toBeGreaterThanOrEqual(30 - 4 * Math.sqrt(22.5));
    expect(sampled.length).toBeLessThanOrEqual(30 + 4 * Math.sqrt(22.5));

    for (const review of sampled) {
      expect((await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' }, { headers: org.reviewer })).status).toBe(200);
    }
    const agreement = (await call(server.url, 'GET', `/routing-rules/${rule.body.id}`, undefined, { headers: org.admin })).body.agreement;
    expect(agreement).toMatchObject({ decided: sampled.length, agreed: sampled.length, share: 1, pending: 0 });
    const suite = (await call(server.url, 'POST', '/evals', { name: 'Weighted' }, { headers: org.admin })).body;
    const result = (await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body.result;
    // Each sampled review stands for four: itself and the three the rule decided alone.
    expect(result.population).toMatchObject({ decided: sampled.length, weighted_decided: sampled.length * 4, excluded: { auto_decided: filed - sampled.length } });
    expect(result.rates.overall.approved.count).toBe(sampled.length * 4);
  }, SAMPLE_TIMEOUT_MS);
});
