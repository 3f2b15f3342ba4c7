import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-evaluation-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Organization {
  id: number;
  admin: Record<string, string>;
  person(role: string): Promise<{ id: number; headers: Record<string, string> }>;
}

let server: TestServer;

async function organization(settings: Record<string, unknown> = {}): Promise<Organization> {
  const created = await call(server.url, 'POST', '/organizations', { name: `Org ${randomUUID().slice(0, 8)}`, settings }, { headers: bearer(OPERATOR_KEY) });
  const admin = bearer(created.body.api_key.key);
  return {
    id: created.body.organization.id,
    admin,
    async person(role) {
      const invited = await call(server.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name: `A ${role} ${randomUUID().slice(0, 4)}`, role }, { headers: admin });
      const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
      const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
      return { id: invited.body.id, headers: { cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0], 'x-csrf-token': accepted.body.csrf_token } };
    },
  };
}

async function file(org: Organization, body: Record<string, unknown>): Promise<number> {
  const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 1042', ...body }, { headers: org.admin });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function decide(reviewId: number, who: Record<string, string>, body: Record<string, unknown>): Promise<void> {
  const decided = await call(server.url, 'POST', `/reviews/${reviewId}/decide`, body, { headers: who });
  expect([200, 202]).toContain(decided.status);
}

/** A review left as expiry or an automatic rule leaves one: decided under the system's names, never a person's. */
async function systemDecided(org: Organization, reviewerName: string, status: string): Promise<void> {
  const now = Date.now();
  const sequelize = server.test.sequelize;
  await sequelize.query(
    `INSERT INTO reviews (organization_id, task_type, proposed_action, confidence_score, urgency, metadata, status, created_at, updated_at, decided_at)
     VALUES ($org, 'refund', 'Refund order 9', 0.97, 'medium', '{}', $status, $now, $now, $now)`,
    { bind: { org: org.id, status, now } },
  );
  const [row] = await sequelize.query<{ id: number }>('SELECT MAX(id) AS id FROM reviews', { type: QueryTypes.SELECT });
  await sequelize.query(`INSERT INTO decisions (review_id, organization_id, decision_type, reviewer_name, created_at) VALUES ($id, $org, $type, $name, $now)`, {
    bind: { id: row.id, org: org.id, type: status === 'approved' ? 'approve' : 'reject', name: reviewerName, now },
  });
}

/** The nearest-rank percentile, written out again here rather than imported. */
function nearestRankOf(sorted: number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
});
afterAll(() => server?.dispose());

describe('evaluation suites', () => {
  it('are created with the contract\'s defaults, listed, changed and deleted by an admin, each change in the audit log', async () => {
    const org = await organization();
    const created = await call(server.url, 'POST', '/evals', { name: 'Refunds', filters: { task_type: ['refund'] } }, { headers: org.admin });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Refunds',
      organization_id: org.id,
      filters: { task_type: ['refund'] },
      target_precision: 0.95,
      confidence: 0.95,
      grid: [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1],
      min_samples: 30,
      schedule: null,
      next_run_at: null,
    });
    const id = created.body.id;
    expect((await call(server.url, 'GET', '/evals', undefined, { headers: org.admin })).body).toMatchObject({ count: 1, evals: [{ id }] });
    const changed = await call(server.url, 'PATCH', `/evals/${id}`, { grid: [0.8, 0.95], schedule: 'weekly' }, { headers: org.admin });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ grid: [0.95, 0.8], schedule: 'weekly' });
    expect(Date.parse(changed.body.next_run_at) - Date.parse(changed.body.updated_at)).toBe(7 * 24 * 3_600_000);
    expect((await call(server.url, 'DELETE', `/evals/${id}`, undefined, { headers: org.admin })).status).toBe(204);
    expectProblem(await call(server.url, 'GET', `/evals/${id}`, undefined, { headers: org.admin }), 404);
    const audit = await call(server.url, 'GET', '/audit-logs?target_type=eval', undefined, { headers: org.admin });
    expect(audit.body.entries.map((entry: { action: string }) => entry.action).sort()).toEqual(['eval.created', 'eval.deleted', 'eval.updated']);
  });

  it('refuses what it cannot run (400), other organizations (404), and anyone but an admin (403)', async () => {
    const org = await organization();
    const other = await organization();
    expectProblem(await call(server.url, 'POST', '/evals', { name: 'x', grid: [0.9512] }, { headers: org.admin }), 400, /0\.001/);
    expectProblem(await call(server.url, 'POST', '/evals', { name: 'x', grid: [0.9, 0.9] }, { headers: org.admin }), 400, /repeat/);
    expectProblem(await call(server.url, 'POST', '/evals', { name: 'x', target_precision: 1 }, { headers: org.admin }), 400);
    expectProblem(await call(server.url, 'POST', '/evals', { name: 'x', schedule: 'hourly' }, { headers: org.admin }), 400);
    expectProblem(await call(server.url, 'POST', '/evals', { name: 'x', filters: { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' } }, { headers: org.admin }), 400, /after/);
    const id = (await call(server.url, 'POST', '/evals', { name: 'mine' }, { headers: org.admin })).body.id;
    expectProblem(await call(server.url, 'GET', `/evals/${id}`, undefined, { headers: other.admin }), 404);
    expectProblem(await call(server.url, 'POST', `/evals/${id}/runs`, undefined, { headers: other.admin }), 404);
    expectProblem(await call(server.url, 'GET', `/evals/${id}/runs`, undefined, { headers: other.admin }), 404);
    const reviewer = await org.person('reviewer');
    expectProblem(await call(server.url, 'GET', '/evals', undefined, { headers: reviewer.headers }), 403);
    const agentKey = await call(server.url, 'POST', `/organizations/${org.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: org.admin });
    expectProblem(await call(server.url, 'POST', `/evals/${id}/runs`, undefined, { headers: bearer(agentKey.body.key) }), 403);
  });

  it('runs over the decided reviews only, and says what it found: rates, calibration, the suggested rule, times, modifications', async () => {
    const org = await organization();
    const reviewer = await org.person('reviewer');
    const ids: number[] = [];
    // 70 at confidence 0.95, every one approved: 0.95^70 < 0.05, so the bound at 0.9 passes.
    for (let i = 0; i < 70; i += 1) {
      const id = await file(org, { confidence_score: 0.95 });
      await decide(id, reviewer.headers, { decision_type: 'approve' });
      ids.push(id);
    }
    // 10 at 0.85, half rejected: at 0.8 the bound falls short, and the walk stops there.
    for (let i = 0; i < 10; i += 1) {
      const id = await file(org, { confidence_score: 0.85 });
      await decide(id, reviewer.headers, { decision_type: i % 2 === 0 ? 'approve' : 'reject' });
      ids.push(id);
    }
    // Four modified e-mails at 0.3, edited by 1, 2, 3 and 4 characters of ten.
    for (const changed of ['abcdefghiX', 'abcdefghXY', 'abcdefgXYZ', 'abcdefWXYZ']) {
      const id = await file(org, { task_type: 'email', proposed_action: 'abcdefghij', confidence_score: 0.3 });
      await decide(id, reviewer.headers, { decision_type: 'modify', modified_action: changed });
      ids.push(id);
    }
    // Two without a confidence, rejected; two still pending; two expired and one auto-decided, which a person did not decide.
    for (let i = 0; i < 2; i += 1) {
      const id = await file(org, { task_type: 'email' });
      await decide(id, reviewer.headers, { decision_type: 'reject' });
      ids.push(id);
    }
    await file(org, { confidence_score: 0.99 });
    await file(org, { confidence_score: 0.99 });
    await systemDecided(org, 'policy:expired', 'rejected');
    await systemDecided(org, 'policy:expired', 'approved');
    await systemDecided(org, 'rule:fast lane', 'approved');
    // Another organization's reviews never count.
    const other = await organization();
    const otherReviewer = await other.person('reviewer');
    await decide(await file(other, { confidence_score: 0.95 }), otherReviewer.headers, { decision_type: 'reject' });

    const suite = (await call(server.url, 'POST', '/evals', { name: 'Everything' }, { headers: org.admin })).body;
    const run = await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ eval_id: suite.id, status: 'succeeded', triggered_by: 'manual', error: null });
    const result = run.body.result;

    expect(result.population).toEqual({ decided: 86, weighted_decided: 86, with_confidence: 84, excluded: { expired: 2, auto_decided: 1, pending: 2 } });
    expect(result.rates.overall.approved).toMatchObject({ count: 75, share: expect.closeTo(75 / 86, 6) });
    expect(result.rates.overall.modified.count).toBe(4);
    expect(result.rates.overall.rejected.count).toBe(7);
    const interval = result.rates.overall.approved.interval;
    expect(interval.lower).toBeLessThan(75 / 86);
    expect(interval.upper).toBeGreaterThan(75 / 86);
    expect(result.rates.by_task_type.map((row: { task_type: string; decided: number }) => [row.task_type, row.decided])).toEqual([
      ['refund', 80],
      ['email', 6],
    ]);

    const bins = result.calibration.bins;
    expect(bins).toHaveLength(10);
    expect(bins[9]).toMatchObject({ lo: 0.9, hi: 1, count: 70, mean_confidence: 0.95, approval_rate: 1 });
    expect(bins[8]).toMatchObject({ lo: 0.8, hi: 0.9, count: 10, mean_confidence: 0.85, approval_rate: 0.5 });
    expect(bins[3]).toMatchObject({ count: 4, mean_confidence: 0.3, approval_rate: 0 });
    const ece = (70 * 0.05 + 10 * 0.35 + 4 * 0.3) / 84;
    expect(result.calibration.ece).toBeCloseTo(ece, 5);
    const brier = (70 * 0.05 ** 2 + 5 * 0.15 ** 2 + 5 * 0.85 ** 2 + 4 * 0.3 ** 2) / 84;
    expect(result.calibration.brier).toBeCloseTo(brier, 5);
    // Every approved review outranks every other but ties at 0.85: (75·9 − 5·4.5 …) counted pair by pair.
    let wins = 0;
    const positives = [...Array(70).fill(0.95), ...Array(5).fill(0.85)];
    const negatives = [...Array(5).fill(0.85), ...Array(4).fill(0.3)];
    for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
    expect(result.calibration.auroc).toBeCloseTo(wins / (positives.length * negatives.length), 5);

    expect(result.suggested_rule).toMatchObject({
      status: 'ok',
      threshold: 0.9,
      count: 70,
      approved: 70,
      lower_bound: expect.closeTo(0.05 ** (1 / 70), 6),
      would_auto_decide: { count: 70, share: expect.closeTo(70 / 86, 6) },
      rule: { conditions: { confidence_score: { operator: '>=', value: 0.9 } }, action: { auto_decide: 'approve' }, mode: 'shadow', audit_sample_rate: 0.05 },
    });
    expect(result.suggested_rule.steps.slice(0, 3).map((step: { threshold: number; passed: boolean | null }) => [step.threshold, step.passed])).toEqual([
      [0.9, true],
      [0.8, false],
      [0.7, null],
    ]);
    expect(result.suggested_rule.guarantee).toMatch(/With 95 % confidence, at least 95 % of the reviews with a confidence of 0.9 or more would have been approved as proposed/);

    const waits: number[] = [];
    for (const id of ids) {
      const review = (await call(server.url, 'GET', `/reviews/${id}`, undefined, { headers: org.admin })).body;
      waits.push((Date.parse(review.decided_at) - Date.parse(review.created_at)) / 1000);
    }
    waits.sort((a, b) => a - b);
    expect(result.time_to_decision).toMatchObject({
      decided: 86,
      p50_seconds: expect.closeTo(nearestRankOf(waits, 50), 3),
      p90_seconds: expect.closeTo(nearestRankOf(waits, 90), 3),
      p99_seconds: expect.closeTo(nearestRankOf(waits, 99), 3),
      expired_share: expect.closeTo(2 / 88, 6),
    });
    // Distances 0.1, 0.2, 0.3, 0.4: the median is 0.25.
    expect(result.modification).toEqual({ share: expect.closeTo(4 / 86, 6), median_edit_distance: 0.25, sample_size: 4, sample_limit: 200, too_long: 0 });
    expect(result.agreement).toMatchObject({ pairs: 0, observed: null, cohen_kappa: null, gwet_ac1: null });

    expect((await call(server.url, 'GET', `/evals/${suite.id}/runs/${run.body.id}`, undefined, { headers: org.admin })).body).toEqual(run.body);
    // The suggested rule is a body the routing rules take as it is.
    const filtered = (await call(server.url, 'POST', '/evals', { name: 'E-mails', filters: { task_type: ['email'] } }, { headers: org.admin })).body;
    const emails = (await call(server.url, 'POST', `/evals/${filtered.id}/runs`, undefined, { headers: org.admin })).body.result;
    expect(emails.population.decided).toBe(6);
    expect(emails.suggested_rule).toMatchObject({ status: 'insufficient_data', threshold: null, rule: null, needed: 55 });
  });

  it('measures agreement between the votes of reviews that had two or more', async () => {
    const org = await organization({ require_two_approvals: true });
    const [ana, ben] = [await org.person('reviewer'), await org.person('reviewer')];
    for (const second of ['approve', 'reject', 'approve']) {
      const id = await file(org, { confidence_score: 0.5 });
      await decide(id, ana.headers, { decision_type: 'approve' });
      await decide(id, ben.headers, { decision_type: second });
    }
    const suite = (await call(server.url, 'POST', '/evals', { name: 'Two approvals' }, { headers: org.admin })).body;
    const result = (await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body.result;
    // Pairs (approve, approve) twice and (approve, reject) once: κ's chance agreement is 2/3, so κ = 0; AC1 = (2/3 − 5/36) / (1 − 5/36) = 19/31.
    expect(result.agreement).toMatchObject({ pairs: 3, observed: expect.closeTo(2 / 3, 6), cohen_kappa: expect.closeTo(0, 6), gwet_ac1: expect.closeTo(19 / 31, 6), reviews: 3 });
  });

  it('pages runs newest first, and a scheduled suite runs once per period however many look for it at once', async () => {
    const org = await organization();
    const suite = (await call(server.url, 'POST', '/evals', { name: 'Nightly', schedule: 'daily' }, { headers: org.admin })).body;
    expect(Date.parse(suite.next_run_at) - Date.parse(suite.created_at)).toBe(24 * 3_600_000);
    await server.test.runDueEvaluations();
    expect((await call(server.url, 'GET', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body.runs).toEqual([]);

    // A day has passed: several looks at once still make one run.
    await server.test.sequelize.query('UPDATE evals SET next_run_at = $past WHERE id = $id', { bind: { past: Date.now() - 1000, id: suite.id } });
    await Promise.all([server.test.runDueEvaluations(), server.test.runDueEvaluations(), server.test.runDueEvaluations()]);
    const runs = (await call(server.url, 'GET', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body;
    expect(runs.runs).toHaveLength(1);
    expect(runs.runs[0]).toMatchObject({ status: 'succeeded', triggered_by: 'schedule' });
    const moved = (await call(server.url, 'GET', `/evals/${suite.id}`, undefined, { headers: org.admin })).body;
    expect(Date.parse(moved.next_run_at)).toBeGreaterThan(Date.now() + 23 * 3_600_000);

    await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin });
    await call(server.url, 'POST', `/evals/${suite.id}/runs`, undefined, { headers: org.admin });
    const first = (await call(server.url, 'GET', `/evals/${suite.id}/runs?limit=2`, undefined, { headers: org.admin })).body;
    expect(first.runs.map((run: { triggered_by: string }) => run.triggered_by)).toEqual(['manual', 'manual']);
    expect(first.next_cursor).toBe(first.runs[1].id);
    const second = (await call(server.url, 'GET', `/evals/${suite.id}/runs?limit=2&cursor=${first.next_cursor}`, undefined, { headers: org.admin })).body;
    expect(second).toMatchObject({ runs: [{ triggered_by: 'schedule' }], next_cursor: null });
  });

  it('says a run whose process stopped an hour ago failed, rather than leave it running for ever', async () => {
    const org = await organization();
    const suite = (await call(server.url, 'POST', '/evals', { name: 'Interrupted' }, { headers: org.admin })).body;
    const twoHoursAgo = Date.now() - 2 * 3_600_000;
    for (const startedAt of [twoHoursAgo, Date.now()]) {
      await server.test.sequelize.query("INSERT INTO eval_runs (eval_id, organization_id, status, triggered_by, started_at) VALUES ($suite, $org, 'running', 'manual', $startedAt)", {
        bind: { suite: suite.id, org: org.id, startedAt },
      });
    }
    await server.test.runDueEvaluations();
    const runs = (await call(server.url, 'GET', `/evals/${suite.id}/runs`, undefined, { headers: org.admin })).body.runs;
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['running', 'failed']);
    expect(runs[1].error).toMatch(/stopped before it finished/);
  });
});
