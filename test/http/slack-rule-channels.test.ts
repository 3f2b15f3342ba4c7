import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server';
import { FakeSlack, hostedSlackSettings } from '../support/slack';

const OPERATOR_KEY = 'operator-key-for-slack-rule-channel-tests';
const INSTALLED_CHANNEL = 'C0INSTALLED';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let slack: FakeSlack;
let server: TestServer;
let admin: Record<string, string>;
let teamId: number;
/** A reviewer of the organization, in whose name the admin's key decides. */
let reviewerId: number;

const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body, { headers: admin });

/** The messages posted about review `id` (by its number in the header), wherever they went. */
function messagesOf(id: number) {
  return slack.messages.filter((message) => message.text.includes(`#${id}:`));
}

async function fileReview(taskType: string): Promise<number> {
  const created = await api('POST', '/reviews', { task_type: taskType, proposed_action: `a ${taskType} to review` });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** Where review `id` was posted, once it is: one message, in one channel. */
async function postedTo(id: number): Promise<string> {
  await expect.poll(() => messagesOf(id).length).toBe(1);
  return messagesOf(id)[0].channel;
}

beforeAll(async () => {
  slack = await FakeSlack.start();
  server = await startTestServer(hostedSlackSettings(slack, OPERATOR_KEY));
  admin = bearer((await call(server.url, 'POST', '/organizations', { name: 'Channelled' }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key);
  // Add to Slack: the fake's authorize page sends the browser straight back with a code.
  const started = await api('POST', '/integrations/slack/oauth');
  const state = new URL(started.body.authorize_url).searchParams.get('state')!;
  const installed = await fetch(`${server.url}/integrations/slack/oauth/callback?${new URLSearchParams({ code: slack.options.oauthCode, state })}`, { redirect: 'manual' });
  expect(installed.status).toBe(200);
  expect((await api('PATCH', '/integrations/slack', { channel_id: INSTALLED_CHANNEL })).status).toBe(200);
  reviewerId = (await api('POST', '/users', { email: 'rae@channelled.example', name: 'Rae', role: 'reviewer' })).body.id;
  teamId = (await api('POST', '/teams', { name: 'reviewers', member_ids: [reviewerId] })).body.id;
  for (const [name, taskType, channel] of [
    ['refunds', 'refund', 'C0REFUNDS'],
    ['deploys', 'deploy', 'C0DEPLOYS'],
    ['no-channel', 'rename', null],
  ] as const) {
    const rule = await api('POST', '/routing-rules', { name, priority: 10, conditions: { task_type: taskType }, assign_to_team_id: teamId, slack_channel_id: channel });
    expect(rule.status).toBe(201);
  }
});
afterAll(async () => {
  await server?.dispose();
  await slack?.stop();
});

describe('a hosted routing rule\'s own Slack channel', () => {
  it('posts each review once to the channel of the rule that routed it; the others to the installation\'s channel', async () => {
    const refund = await fileReview('refund');
    const deploy = await fileReview('deploy');
    const unrouted = await fileReview('unrouted');
    const routedWithoutChannel = await fileReview('rename');
    expect(await postedTo(refund)).toBe('C0REFUNDS');
    expect(await postedTo(deploy)).toBe('C0DEPLOYS');
    expect(await postedTo(unrouted)).toBe(INSTALLED_CHANNEL);
    expect(await postedTo(routedWithoutChannel)).toBe(INSTALLED_CHANNEL);
    // The organization's own token posts everywhere.
    expect(new Set(slack.callsOf('chat.postMessage').map((posted) => posted.authorization))).toEqual(new Set([`Bearer ${slack.issuedTokens[0]}`]));
  });

  it('a shadow rule\'s mark routes nothing: its channel is not used, the rule that routes the review chooses', async () => {
    const shadow = await api('POST', '/routing-rules', { name: 'shadow-refunds', priority: 100, conditions: { task_type: 'refund' }, action: { auto_decide: 'approve' }, slack_channel_id: 'C0SHADOW' });
    expect(shadow.body).toMatchObject({ mode: 'shadow', slack_channel_id: 'C0SHADOW' });
    const refund = await fileReview('refund');
    expect((await api('GET', `/reviews/${refund}`)).body).toMatchObject({ routing_rule: 'refunds', shadow_rule_id: shadow.body.id });
    expect(await postedTo(refund)).toBe('C0REFUNDS');
    expect((await api('DELETE', `/routing-rules/${shadow.body.id}`)).status).toBe(204);
  });

  it('an enforced rule\'s own decisions go to its channel, already decided', async () => {
    const enforced = await api('POST', '/routing-rules', { name: 'auto-tidy', priority: 100, conditions: { task_type: 'tidy' }, action: { auto_decide: 'approve' }, mode: 'enforce', audit_sample_rate: 0, slack_channel_id: 'C0AUTO' });
    expect(enforced.status).toBe(201);
    const tidy = await fileReview('tidy');
    expect(await postedTo(tidy)).toBe('C0AUTO');
    expect(messagesOf(tidy)[0].blocks.at(-1)!.elements.map((button: { action_id: string }) => button.action_id)).toEqual(['gl.open']);
  });

  it('a rule\'s channel changed or cleared applies to the next reviews; a posted message stays, and is updated, where it is', async () => {
    const before = await fileReview('deploy');
    expect(await postedTo(before)).toBe('C0DEPLOYS');
    const rules = (await api('GET', '/routing-rules')).body.routing_rules as Array<{ id: number; name: string }>;
    const deploys = rules.find((rule) => rule.name === 'deploys')!;
    expect((await api('PATCH', `/routing-rules/${deploys.id}`, { slack_channel_id: 'C0RELEASES' })).body.slack_channel_id).toBe('C0RELEASES');
    expect(await postedTo(await fileReview('deploy'))).toBe('C0RELEASES');

    expect((await api('POST', `/reviews/${before}/decide`, { decision_type: 'approve', reviewer_id: reviewerId })).status).toBe(200);
    await expect.poll(() => messagesOf(before)[0].updates).toBe(1);
    expect(messagesOf(before)).toMatchObject([{ channel: 'C0DEPLOYS' }]);

    expect((await api('PATCH', `/routing-rules/${deploys.id}`, { slack_channel_id: null })).body.slack_channel_id).toBeNull();
    expect(await postedTo(await fileReview('deploy'))).toBe(INSTALLED_CHANNEL);
  });
});
