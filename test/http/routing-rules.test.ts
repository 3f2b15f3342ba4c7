import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, type JsonResponse, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-routing-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let server: TestServer;
let admin: Record<string, string>;
let otherAdmin: Record<string, string>;
let finance: { id: number; name: string };
let fay: { id: number; email: string; cookie: string };
let sam: { id: number; email: string; cookie: string };

/** A person of the organization, signed in through their invitation link. */
async function person(name: string, role = 'reviewer'): Promise<{ id: number; email: string; cookie: string }> {
  const email = `${name.toLowerCase()}-${randomUUID().slice(0, 8)}@acme.example`;
  const invited = await call(server.url, 'POST', '/users', { email, name, role }, { headers: admin });
  const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
  const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
  return { id: invited.body.id, email, cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0] };
}

function rule(body: Record<string, unknown>, headers = admin): Promise<JsonResponse> {
  return call(server.url, 'POST', '/routing-rules', body, { headers });
}

async function fileReview(body: Record<string, unknown>): Promise<any> {
  const created = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 1042', ...body }, { headers: admin });
  expect(created.status).toBe(201);
  return created.body;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  const created = await call(server.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
  admin = bearer(created.body.api_key.key);
  otherAdmin = bearer((await call(server.url, 'POST', '/organizations', { name: 'Globex' }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key);
  fay = await person('Fay');
  sam = await person('Sam');
  finance = (await call(server.url, 'POST', '/teams', { name: 'finance', member_ids: [fay.id] }, { headers: admin })).body;
});
afterAll(() => server?.dispose());

describe('routing rules in the database', () => {
  it('are created, listed, read, changed and deleted by an admin', async () => {
    const created = await rule({ name: 'crud', priority: 5, conditions: { task_type: 'crud-only' }, assign_to_user_id: sam.id });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'crud', priority: 5, conditions: { task_type: 'crud-only' }, assign_to_user_id: sam.id, assign_to_team_id: null, is_active: true });
    const id = created.body.id;
    expect((await call(server.url, 'GET', '/routing-rules', undefined, { headers: admin })).body.routing_rules.map((r: { id: number }) => r.id)).toContain(id);
    expect((await call(server.url, 'GET', `/routing-rules/${id}`, undefined, { headers: admin })).body.name).toBe('crud');
    const changed = await call(server.url, 'PATCH', `/routing-rules/${id}`, { is_active: false, assign_to_team_id: finance.id }, { headers: admin });
    expect(changed.body).toMatchObject({ is_active: false, assign_to_team_id: finance.id, assign_to_user_id: sam.id });
    expect((await call(server.url, 'DELETE', `/routing-rules/${id}`, undefined, { headers: admin })).status).toBe(204);
    expectProblem(await call(server.url, 'GET', `/routing-rules/${id}`, undefined, { headers: admin }), 404);
  });

  it('refuses what the engine would refuse, a rule without an assignee, a taken name, and another organization’s people', async () => {
    expectProblem(await rule({ name: 'bad-operator', priority: 1, conditions: { task_type: { operator: '=~', value: 'x' } }, assign_to_user_id: sam.id }), 400, /unknown operator/);
    expectProblem(await rule({ name: 'bad-field', priority: 1, conditions: { amount: { operator: '>', value: 1 } }, assign_to_user_id: sam.id }), 400, /unknown field 'amount'/);
    expectProblem(await rule({ name: 'slow-pattern', priority: 1, conditions: { proposed_action: { operator: 'matches', value: '(a+)+$' } }, assign_to_user_id: sam.id }), 400, /nests quantifiers/);
    expectProblem(await rule({ name: 'nobody', priority: 1 }), 400, /assigns to a user/);
    expect((await rule({ name: 'taken', priority: 1, conditions: { task_type: 'never-filed' }, assign_to_user_id: sam.id })).status).toBe(201);
    expectProblem(await rule({ name: 'taken', priority: 2, assign_to_user_id: sam.id }), 409, /named 'taken'/);
    const theirTeam = (await call(server.url, 'POST', '/teams', { name: 'theirs' }, { headers: otherAdmin })).body;
    expectProblem(await rule({ name: 'foreign-team', priority: 1, assign_to_team_id: theirTeam.id }), 404, /team/);
    expectProblem(await rule({ name: 'foreign-user', priority: 1, assign_to_user_id: 999_999 }), 404, /user/);
    const ours = (await call(server.url, 'GET', '/routing-rules', undefined, { headers: admin })).body.routing_rules;
    expectProblem(await call(server.url, 'GET', `/routing-rules/${ours[0].id}`, undefined, { headers: otherAdmin }), 404);
  });

  it('refuses to assign to a viewer or a deactivated person, and lets a rule whose assignee was deactivated since be switched off', async () => {
    const vic = await person('Vic', 'viewer');
    expectProblem(await rule({ name: 'to-a-viewer', priority: 1, assign_to_user_id: vic.id }), 422, /assign_to_user_id: Vic \(user \d+\) is a viewer, who reads reviews but cannot decide them/);
    const kept = await rule({ name: 'to-someone-leaving', priority: 1, conditions: { task_type: 'never-filed' }, assign_to_user_id: (await person('Lee')).id });
    expect(kept.status).toBe(201);
    expect((await call(server.url, 'DELETE', `/users/${kept.body.assign_to_user_id}`, undefined, { headers: admin })).status).toBe(204);
    expectProblem(await rule({ name: 'to-the-deactivated', priority: 1, assign_to_user_id: kept.body.assign_to_user_id }), 422, /is deactivated/);
    const switchedOff = await call(server.url, 'PATCH', `/routing-rules/${kept.body.id}`, { is_active: false }, { headers: admin });
    expect(switchedOff.body).toMatchObject({ is_active: false });
    expectProblem(await call(server.url, 'PATCH', `/routing-rules/${kept.body.id}`, { assign_to_user_id: vic.id }, { headers: admin }), 422, /viewer/);
  });
});

describe('a rule\'s Slack channel (slack_channel_id)', () => {
  it('is kept, read back, changed and cleared, and the audit log records it with the rule', async () => {
    const created = await rule({ name: 'to-finance-channel', priority: 1, conditions: { task_type: 'never-filed' }, assign_to_team_id: finance.id, slack_channel_id: 'C0FINANCE' });
    expect(created.status).toBe(201);
    expect(created.body.slack_channel_id).toBe('C0FINANCE');
    const read = await call(server.url, 'GET', `/routing-rules/${created.body.id}`, undefined, { headers: admin });
    expect(read.body.slack_channel_id).toBe('C0FINANCE');
    const changed = await call(server.url, 'PATCH', `/routing-rules/${created.body.id}`, { slack_channel_id: 'G0PRIVATE' }, { headers: admin });
    expect(changed.body).toMatchObject({ slack_channel_id: 'G0PRIVATE', assign_to_team_id: finance.id });
    // A change that leaves it out keeps it.
    expect((await call(server.url, 'PATCH', `/routing-rules/${created.body.id}`, { priority: 2 }, { headers: admin })).body.slack_channel_id).toBe('G0PRIVATE');
    const cleared = await call(server.url, 'PATCH', `/routing-rules/${created.body.id}`, { slack_channel_id: null }, { headers: admin });
    expect(cleared.body.slack_channel_id).toBeNull();
    expect((await call(server.url, 'GET', `/routing-rules/${created.body.id}`, undefined, { headers: admin })).body.slack_channel_id).toBeNull();
    // Without one, a rule has none.
    expect((await rule({ name: 'no-channel', priority: 1, conditions: { task_type: 'never-filed' }, assign_to_team_id: finance.id })).body.slack_channel_id).toBeNull();

    const ofRule = (await call(server.url, 'GET', `/audit-logs?target_type=routing_rule&target_id=${created.body.id}`, undefined, { headers: admin })).body.entries as Array<{ action: string; data: Record<string, unknown> }>;
    expect(ofRule.find((entry) => entry.action === 'routing_rule.created')!.data).toMatchObject({ name: 'to-finance-channel', slack_channel_id: 'C0FINANCE' });
    expect(ofRule.filter((entry) => entry.action === 'routing_rule.updated').map((entry) => entry.data)).toContainEqual({ changed: ['slack_channel_id'] });
  });

  it('refuses what is not a Slack channel id with 400, on creation and on change, and keeps the rule as it was', async () => {
    for (const bad of ['#finance', 'finance', 'c0lowercase', 'U0SOMEONE', '', 42]) {
      expectProblem(await rule({ name: `bad-channel-${String(bad)}`, priority: 1, assign_to_team_id: finance.id, slack_channel_id: bad }), 400, /slack_channel_id/);
    }
    const kept = await rule({ name: 'channel-kept', priority: 1, conditions: { task_type: 'never-filed' }, assign_to_team_id: finance.id, slack_channel_id: 'C0KEPT' });
    expectProblem(await call(server.url, 'PATCH', `/routing-rules/${kept.body.id}`, { slack_channel_id: '#general' }, { headers: admin }), 400, /slack_channel_id/);
    expect((await call(server.url, 'GET', `/routing-rules/${kept.body.id}`, undefined, { headers: admin })).body.slack_channel_id).toBe('C0KEPT');
    const names = (await call(server.url, 'GET', '/routing-rules', undefined, { headers: admin })).body.routing_rules.map((r: { name: string }) => r.name);
    expect(names.filter((name: string) => name.startsWith('bad-channel-'))).toEqual([]);
  });
});

describe('routing a review by the rules', () => {
  beforeAll(async () => {
    await rule({ name: 'refunds-to-sam', priority: 10, conditions: { task_type: 'payout' }, assign_to_user_id: sam.id });
    await rule({ name: 'large-payouts', priority: 100, conditions: { task_type: 'payout', 'metadata.amount': { operator: '>', value: 1000 } }, assign_to_team_id: finance.id });
    await rule({ name: 'tie-first', priority: 50, conditions: { task_type: 'tie' }, assign_to_user_id: sam.id });
    await rule({ name: 'tie-second', priority: 50, conditions: { task_type: 'tie' }, assign_to_team_id: finance.id });
    await rule({ name: 'switched-off', priority: 1000, conditions: {}, assign_to_user_id: fay.id, is_active: false });
  });

  it('tries the higher priority first, ties by the older rule, and skips inactive rules', async () => {
    expect(await fileReview({ task_type: 'payout', metadata: { amount: 5000 } })).toMatchObject({ routing_rule: 'large-payouts', assigned_team: 'finance', assigned_to: null });
    expect(await fileReview({ task_type: 'payout', metadata: { amount: 50 } })).toMatchObject({ routing_rule: 'refunds-to-sam', assigned_to: sam.email, assigned_team: null });
    expect(await fileReview({ task_type: 'tie' })).toMatchObject({ routing_rule: 'tie-first', assigned_to: sam.email });
    expect(await fileReview({ task_type: 'unrouted' })).toMatchObject({ routing_rule: null, assigned_to: null, assigned_team: null });
  });

  it('shows a team’s review under Mine to each member, and a person’s own to them', async () => {
    const teamReview = await fileReview({ task_type: 'payout', metadata: { amount: 2000 } });
    const samsReview = await fileReview({ task_type: 'payout', metadata: { amount: 20 } });
    const mine = async (who: { cookie: string }): Promise<number[]> =>
      (await call(server.url, 'GET', '/reviews?mine=true&page_size=100', undefined, { headers: { cookie: who.cookie } })).body.reviews.map((r: { id: number }) => r.id);
    expect(await mine(fay)).toContain(teamReview.id);
    expect(await mine(fay)).not.toContain(samsReview.id);
    expect(await mine(sam)).toContain(samsReview.id);
    expect(await mine(sam)).not.toContain(teamReview.id);
    expectProblem(await call(server.url, 'GET', '/reviews?mine=true', undefined, { headers: admin }), 400, /signed in/);
  });

  it('says which rule a sample review would meet, and why the others did not', async () => {
    const trial = await call(server.url, 'POST', '/routing-rules/trial', { task_type: 'payout', proposed_action: 'Pay out', metadata: { amount: 20 } }, { headers: admin });
    expect(trial.status).toBe(200);
    expect(trial.body.matched_rule).toMatchObject({ name: 'refunds-to-sam', assign_to_user_id: sam.id });
    const tried = trial.body.rules.map((r: { name: string }) => r.name);
    expect(tried.indexOf('switched-off')).toBeLessThan(tried.indexOf('large-payouts'));
    expect(tried.indexOf('large-payouts')).toBeLessThan(tried.indexOf('refunds-to-sam'));
    const large = trial.body.rules.find((r: { name: string }) => r.name === 'large-payouts');
    expect(large).toMatchObject({ matched: false });
    expect(large.conditions).toEqual([
      { field: 'task_type', operator: '=', value: 'payout', actual: 'payout', holds: true },
      { field: 'metadata.amount', operator: '>', value: 1000, actual: 20, holds: false },
    ]);
    expect(trial.body.rules.find((r: { name: string }) => r.name === 'switched-off')).toMatchObject({ is_active: false, matched: true });
  });
});
