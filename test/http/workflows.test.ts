import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { call, expectProblem, type JsonResponse, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-workflow-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Person {
  id: number;
  name: string;
  headers: Record<string, string>;
}

let server: TestServer;

/** An organization of its own per test: its settings and workflows govern every review filed in it. */
async function organization(settings: Record<string, unknown> = {}): Promise<{ id: number; admin: Record<string, string>; person(role: string, name?: string): Promise<Person> }> {
  const created = await call(server.url, 'POST', '/organizations', { name: `Org ${randomUUID().slice(0, 8)}`, settings }, { headers: bearer(OPERATOR_KEY) });
  const admin = bearer(created.body.api_key.key);
  return {
    id: created.body.organization.id,
    admin,
    async person(role, name = `A ${role} ${randomUUID().slice(0, 4)}`) {
      const invited = await call(server.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name, role }, { headers: admin });
      const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
      const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
      const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0];
      return { id: invited.body.id, name, headers: { cookie, 'x-csrf-token': accepted.body.csrf_token } };
    },
  };
}

function vote(reviewId: number, who: Person, body: Record<string, unknown> = { decision_type: 'approve' }): Promise<JsonResponse> {
  return call(server.url, 'POST', `/reviews/${reviewId}/decide`, body, { headers: who.headers });
}

async function file(admin: Record<string, string>, body: Record<string, unknown> = {}): Promise<number> {
  const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 1042 (EUR 1,250.00)', ...body }, { headers: admin });
  expect(created.status).toBe(201);
  return created.body.id;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
});
afterAll(() => server?.dispose());

describe('require_two_approvals', () => {
  it('answers the first approval 202 and the second 200, and a blocking agent only after the second', async () => {
    const org = await organization({ require_two_approvals: true });
    const [ana, ben] = [await org.person('reviewer', 'Ana'), await org.person('admin', 'Ben')];
    const agent = fetch(`${server.url}/reviews`, {
      method: 'POST',
      headers: { ...org.admin, 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'refund', proposed_action: 'Refund order 7 (EUR 5,000.00)', blocking: true }),
    }).then(async (response) => ({ status: response.status, body: await response.json(), answeredAt: Date.now() }));
    let reviewId: number | undefined;
    await expect.poll(async () => (reviewId = (await call(server.url, 'GET', '/reviews?status=pending', undefined, { headers: org.admin })).body.reviews[0]?.id)).toBeDefined();

    const first = await vote(reviewId!, ana, { decision_type: 'approve', notes: 'Looks right.' });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ review_id: reviewId, status: 'pending', workflow: { id: null, name: 'Two approvals', stage: 0, required_approvals: 2, approvals: 1 } });
    expect(first.body.votes).toMatchObject([{ user_id: ana.id, user_name: 'Ana', decision_type: 'approve', notes: 'Looks right.' }]);
    expectProblem(await vote(reviewId!, ana), 409, /already voted/);
    const review = await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: org.admin });
    expect(review.body).toMatchObject({ status: 'pending', decision: null, workflow: { stage: 0, stages: [{ approvals: 1, required_approvals: 2 }], stuck: false } });
    expect(review.body.workflow.waiting_on).toContain(ben.id);
    expect(review.body.workflow.waiting_on).not.toContain(ana.id);
    expect((await call(server.url, 'GET', `/reviews/${reviewId}/decision`, undefined, { headers: org.admin })).body).toBeNull();

    const decidedAt = Date.now();
    const second = await vote(reviewId!, ben);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ decision_type: 'approve', reviewer_id: ben.id, reviewer_name: 'Ben' });
    const answered = await agent;
    expect(answered.status).toBe(201);
    expect(answered.answeredAt).toBeGreaterThanOrEqual(decidedAt);
    expect(answered.body).toMatchObject({ id: reviewId, status: 'approved', decision: { reviewer_name: 'Ben' } });
  });

  it('lets no viewer vote, and has any reject end the review', async () => {
    const org = await organization({ require_two_approvals: true });
    const viewer = await org.person('viewer');
    const reviewer = await org.person('reviewer');
    const reviewId = await file(org.admin);
    expectProblem(await vote(reviewId, viewer), 403);
    const rejected = await vote(reviewId, reviewer, { decision_type: 'reject', notes: 'Not without the invoice.' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ decision_type: 'reject', notes: 'Not without the invoice.' });
  });

  it('lets exactly one of two last votes at once complete the review', async () => {
    const org = await organization({ require_two_approvals: true });
    const [first, second, third] = [await org.person('reviewer'), await org.person('reviewer'), await org.person('reviewer')];
    const reviewId = await file(org.admin);
    expect((await vote(reviewId, first)).status).toBe(202);
    const statuses = (await Promise.all([vote(reviewId, second), vote(reviewId, third)])).map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409]);
    const review = await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: org.admin });
    expect(review.body.status).toBe('approved');
    expect(review.body.workflow.votes).toHaveLength(2);
  });
});

describe('workflows with stages', () => {
  it('run finance then a manager: later stages wait, modify carries on, and the last approval decides', async () => {
    const org = await organization();
    const fin = await org.person('reviewer', 'Fin');
    const max = await org.person('admin', 'Max');
    const other = await org.person('reviewer', 'Other');
    const team = await call(server.url, 'POST', '/teams', { name: 'finance', member_ids: [fin.id] }, { headers: org.admin });
    const workflow = await call(
      server.url,
      'POST',
      '/workflows',
      {
        name: 'large refunds',
        conditions: { task_type: 'refund', 'metadata.amount': { operator: '>', value: 1000 } },
        stages: [
          { name: 'finance', approvers: { team_id: team.body.id }, required_approvals: 1 },
          { name: 'manager', approvers: { roles: ['admin'] }, required_approvals: 1 },
        ],
      },
      { headers: org.admin },
    );
    expect(workflow.status).toBe(201);
    const small = await file(org.admin, { metadata: { amount: 20 } });
    expect((await call(server.url, 'GET', `/reviews/${small}`, undefined, { headers: org.admin })).body.workflow).toBeUndefined();

    const reviewId = await file(org.admin, { metadata: { amount: 5000 } });
    expectProblem(await vote(reviewId, max), 403, /stage 2 \(manager\), which has not begun/);
    expectProblem(await vote(reviewId, other), 403, /not an approver/);
    const modified = await vote(reviewId, fin, { decision_type: 'modify', modified_action: 'Refund EUR 4,000 now, the rest after the audit' });
    expect(modified.status).toBe(202);
    expect(modified.body.workflow).toMatchObject({ stage: 1, required_approvals: 1, approvals: 0 });
    const final = await vote(reviewId, max, { decision_type: 'approve', notes: 'Agreed.' });
    expect(final.status).toBe(200);
    expect(final.body).toMatchObject({ decision_type: 'modify', modified_action: 'Refund EUR 4,000 now, the rest after the audit', reviewer_name: 'Max', notes: 'Agreed.' });
  });

  it('shows a workflow whose only approvers were deactivated as stuck', async () => {
    const org = await organization();
    const only = await org.person('reviewer');
    await call(server.url, 'POST', '/workflows', { name: 'just one', stages: [{ name: 'only', approvers: { user_ids: [only.id] }, required_approvals: 1 }] }, { headers: org.admin });
    const reviewId = await file(org.admin);
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: org.admin })).body.workflow).toMatchObject({ stuck: false, waiting_on: [only.id] });
    await call(server.url, 'DELETE', `/users/${only.id}`, undefined, { headers: org.admin });
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: org.admin })).body.workflow).toMatchObject({ stuck: true, waiting_on: [] });
  });

  it('refuses stages without approvers, another organization’s people, and conditions the engine refuses', async () => {
    const org = await organization();
    const create = (body: Record<string, unknown>): Promise<JsonResponse> => call(server.url, 'POST', '/workflows', { name: 'w', ...body }, { headers: org.admin });
    expectProblem(await create({ stages: [{ name: 's', approvers: {}, required_approvals: 1 }] }), 400, /at least one of user_ids, team_id or roles/);
    expectProblem(await create({ stages: [{ name: 's', approvers: { user_ids: [999_999] }, required_approvals: 1 }] }), 404, /user/);
    expectProblem(await create({ conditions: { amount: 1 }, stages: [{ name: 's', approvers: { roles: ['admin'] }, required_approvals: 1 }] }), 400, /unknown field 'amount'/);
    expectProblem(await create({ stages: [] }), 400);
  });

  it('refuses a viewer or a deactivated person as an approver, and a stage asking for more approvals than its people can give', async () => {
    const org = await organization();
    const create = (stages: unknown[]): Promise<JsonResponse> => call(server.url, 'POST', '/workflows', { name: 'w', stages }, { headers: org.admin });
    const [rae, vic, gone] = [await org.person('reviewer', 'Rae'), await org.person('viewer', 'Vic'), await org.person('reviewer', 'Gone')];
    await call(server.url, 'DELETE', `/users/${gone.id}`, undefined, { headers: org.admin });
    const team = (await call(server.url, 'POST', '/teams', { name: 'mixed', member_ids: [rae.id, vic.id, gone.id] }, { headers: org.admin })).body;

    expectProblem(await create([{ name: 's', approvers: { user_ids: [rae.id, vic.id] }, required_approvals: 1 }]), 422, /stages\[0\]\.approvers\.user_ids: Vic \(user \d+\) is a viewer/);
    expectProblem(await create([{ name: 's', approvers: { user_ids: [gone.id] }, required_approvals: 1 }]), 422, /Gone \(user \d+\) is deactivated/);
    expectProblem(await create([{ name: 's', approvers: { roles: ['viewer'] }, required_approvals: 1 }]), 400, /roles/);
    expectProblem(await create([{ name: 's', approvers: { team_id: 999_999 }, required_approvals: 1 }]), 404, /team 999999/);
    // Of the team's three, only Rae may vote: its viewer never does, nor does a deactivated member.
    expectProblem(
      await create([
        { name: 'first', approvers: { roles: ['reviewer'] }, required_approvals: 1 },
        { name: 'finance', approvers: { team_id: team.id }, required_approvals: 2 },
      ]),
      422,
      /stages\[1\]\.required_approvals: stage 2 \(finance\) asks for 2 approvals, but only 1 active reviewer or admin is among its approvers/,
    );
    expect((await create([{ name: 'finance', approvers: { team_id: team.id }, required_approvals: 1 }])).status).toBe(201);
  });

  it('keeps a workflow whose approver was deactivated since open to other changes, not to stages that still name them', async () => {
    const org = await organization();
    const [ana, ben] = [await org.person('reviewer', 'Ana'), await org.person('reviewer', 'Ben')];
    const stages = [{ name: 'both', approvers: { user_ids: [ana.id, ben.id] }, required_approvals: 2 }];
    const created = await call(server.url, 'POST', '/workflows', { name: 'pair', stages }, { headers: org.admin });
    expect(created.status).toBe(201);
    await call(server.url, 'DELETE', `/users/${ben.id}`, undefined, { headers: org.admin });
    const switchedOff = await call(server.url, 'PATCH', `/workflows/${created.body.id}`, { is_active: false, name: 'pair (paused)' }, { headers: org.admin });
    expect(switchedOff.body).toMatchObject({ is_active: false, name: 'pair (paused)' });
    expectProblem(await call(server.url, 'PATCH', `/workflows/${created.body.id}`, { stages }, { headers: org.admin }), 422, /Ben \(user \d+\) is deactivated/);
    const narrowed = [{ name: 'both', approvers: { user_ids: [ana.id] }, required_approvals: 2 }];
    expectProblem(await call(server.url, 'PATCH', `/workflows/${created.body.id}`, { stages: narrowed }, { headers: org.admin }), 422, /asks for 2 approvals, but only 1/);
  });
});

describe('expiry of a review whose workflow is still voting', () => {
  it('applies on_expiry and says in the notes where the workflow stood', async () => {
    const expiring = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, routing: compilePolicy({ expiry: { critical: 2 }, on_expiry: 'reject' }) });
    try {
      const created = await call(expiring.url, 'POST', '/organizations', { name: 'Expiring', settings: { require_two_approvals: true } }, { headers: bearer(OPERATOR_KEY) });
      const admin = bearer(created.body.api_key.key);
      const invited = await call(expiring.url, 'POST', '/users', { email: 'only@example.com', name: 'Only', role: 'reviewer' }, { headers: admin });
      const review = await call(expiring.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10', urgency: 'critical' }, { headers: admin });
      expect((await call(expiring.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve', reviewer_id: invited.body.id }, { headers: admin })).status).toBe(202);
      let decision: any = null;
      await expect.poll(async () => (decision = (await call(expiring.url, 'GET', `/reviews/${review.body.id}/decision?wait=5`, undefined, { headers: admin })).body), { timeout: 15_000 }).not.toBeNull();
      expect(decision).toMatchObject({ decision_type: 'reject', reviewer_name: 'policy:expired' });
      expect(decision.notes).toContain("When it expired, its approval workflow 'Two approvals' was at stage 1 of 1 (Two approvals) with 1 of 2 approvals.");
    } finally {
      await expiring.dispose();
    }
  });
});
