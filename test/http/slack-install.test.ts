import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server';
import { clickPayload, FakeSlack, interactionBody, postAsSlack } from '../support/slack';

const OPERATOR_KEY = 'operator-key-for-slack-install-tests-0123';
const SECRET = 'slack-signing-secret-for-install-tests';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

let slack: FakeSlack;
let server: TestServer;
let admin: Record<string, string>;
let otherAdmin: Record<string, string>;

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = admin) => call(server.url, method, path, body, { headers });

/** Slack's redirect of the admin's browser back to the callback. */
async function callback(query: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/integrations/slack/oauth/callback?${new URLSearchParams(query)}`, { redirect: 'manual' });
}

/** "Add to Slack", authorized in Slack, and the browser back: the state Slack echoes. */
async function install(code: string, headers = admin): Promise<Response> {
  slack.oauthCodes.add(code);
  const started = await api('POST', '/integrations/slack/oauth', undefined, headers);
  expect(started.status).toBe(200);
  const state = new URL(started.body.authorize_url).searchParams.get('state')!;
  return callback({ code, state });
}

beforeAll(async () => {
  slack = await FakeSlack.start();
  server = await startTestServer({
    edition: 'hosted',
    operator_key: OPERATOR_KEY,
    public_url: 'https://review.example.com',
    slack_api_url: slack.apiUrl,
    slack_oauth_url: 'https://slack.example/oauth/v2/authorize',
    slack_client_id: slack.options.clientId,
    slack_client_secret: slack.options.clientSecret,
    slack_token_key: randomBytes(32).toString('base64'),
    slack_signing_secret: SECRET,
  });
  admin = bearer((await call(server.url, 'POST', '/organizations', { name: 'Slacking' }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key);
  otherAdmin = bearer((await call(server.url, 'POST', '/organizations', { name: 'Elsewhere' }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key);
});
afterAll(async () => {
  await server?.dispose();
  await slack?.stop();
});

describe('installing Slack for an organization (OAuth v2)', () => {
  it('sends the admin to Slack with the client id, the bot scopes, the callback and a random state', async () => {
    const started = await api('POST', '/integrations/slack/oauth');
    const url = new URL(started.body.authorize_url);
    expect(`${url.origin}${url.pathname}`).toBe('https://slack.example/oauth/v2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: slack.options.clientId,
      scope: 'chat:write,im:write,users:read,users:read.email',
      user_scope: '',
      redirect_uri: 'https://review.example.com/api/integrations/slack/oauth/callback',
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
  });

  it('completes the install: the code exchanged with HTTP Basic, the token kept encrypted and never shown, the console next', async () => {
    const answer = await install('code-first');
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('<meta http-equiv="refresh" content="0;url=https://review.example.com/#/console/slack">');
    const [exchange] = slack.callsOf('oauth.v2.access');
    expect(exchange.authorization).toBe(`Basic ${Buffer.from(`${slack.options.clientId}:${slack.options.clientSecret}`).toString('base64')}`);
    expect(exchange.args).toMatchObject({ code: 'code-first', redirect_uri: 'https://review.example.com/api/integrations/slack/oauth/callback' });
    const status = await api('GET', '/integrations/slack');
    expect(status.body).toMatchObject({ provider: 'slack', team: { id: 'T0FAKE', name: 'Fake Team' }, bot_user_id: 'U0BOT', channel_id: null, status: 'active' });
    const token = slack.issuedTokens.at(-1)!;
    expect(JSON.stringify(status.body)).not.toContain(token);
    const rows = (await server.test.sequelize.query('SELECT * FROM slack_installations', { type: 'SELECT' })) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(String(rows[0].token_ciphertext)).toMatch(/^v1:/);
    const audit = await api('GET', '/audit-logs?action=slack.installed');
    expect(audit.body.entries.map((entry: { action: string }) => entry.action)).toContain('slack.installed');
  });

  it('refuses a replayed, foreign or expired state with 400, and stores nothing', async () => {
    slack.oauthCodes.add('code-replayed');
    const started = await api('POST', '/integrations/slack/oauth', undefined, otherAdmin);
    const state = new URL(started.body.authorize_url).searchParams.get('state')!;
    expect((await callback({ code: 'code-replayed', state })).status).toBe(200);
    slack.oauthCodes.add('code-again');
    const replayed = await callback({ code: 'code-again', state });
    expect(replayed.status).toBe(400);
    expect((await replayed.json()).detail).toMatch(/unknown, used or expired/);
    expect((await callback({ code: 'code-again', state: randomBytes(32).toString('base64url') })).status).toBe(400);
    expect(slack.oauthCodes.has('code-again')).toBe(true);
    // A cancelled authorization comes back without a code.
    expect((await callback({ error: 'access_denied', state })).status).toBe(400);
  });

  it('keeps each organization\'s install its own', async () => {
    await api('DELETE', '/integrations/slack', undefined, otherAdmin);
    expect((await api('GET', '/integrations/slack', undefined, otherAdmin)).status).toBe(404);
    expect((await api('GET', '/integrations/slack')).status).toBe(200);
  });

  it('posts the organization\'s new reviews to the channel an admin picks, with its token', async () => {
    expect((await api('PATCH', '/integrations/slack', { channel_id: '#general' })).status).toBe(400);
    const changed = await api('PATCH', '/integrations/slack', { channel_id: 'C0ORGREVIEWS' });
    expect(changed.body.channel_id).toBe('C0ORGREVIEWS');
    const review = await api('POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 5 via the org app' });
    await expect.poll(() => slack.messages.filter((m) => m.channel === 'C0ORGREVIEWS').length).toBe(1);
    const [message] = slack.messages.filter((m) => m.channel === 'C0ORGREVIEWS');
    expect(message.text).toContain(`#${review.body.id}:`);
    expect(message.blocks.at(-1)!.elements.map((b: { action_id: string }) => b.action_id)).toEqual(['gl.approve', 'gl.reject', 'gl.modify', 'gl.open']);
    // The first organization's own token (its install was the first).
    expect(slack.callsOf('chat.postMessage').at(-1)!.authorization).toBe(`Bearer ${slack.issuedTokens[0]}`);
    const audit = await api('GET', '/audit-logs?action=slack.channel_changed');
    expect(audit.body.entries[0].data).toEqual({ from: null, to: 'C0ORGREVIEWS' });
  });

  it('marks the installation revoked when Slack says the app was uninstalled', async () => {
    const body = JSON.stringify({ type: 'event_callback', team_id: 'T0FAKE', event: { type: 'app_uninstalled' } });
    expect((await postAsSlack(server.url, '/integrations/slack/events', body, SECRET, { contentType: 'application/json' })).status).toBe(200);
    expect((await api('GET', '/integrations/slack')).body.status).toBe('revoked');
    const [row] = (await server.test.sequelize.query('SELECT token_ciphertext FROM slack_installations', { type: 'SELECT' })) as Array<{ token_ciphertext: string | null }>;
    expect(row.token_ciphertext).toBeNull();
  });

  it('uninstalls: the token revoked at Slack and deleted here', async () => {
    expect((await install('code-reinstall')).status).toBe(200);
    expect((await api('GET', '/integrations/slack')).body.status).toBe('active');
    const revokesBefore = slack.callsOf('auth.revoke').length;
    expect((await api('DELETE', '/integrations/slack')).status).toBe(204);
    expect(slack.callsOf('auth.revoke')).toHaveLength(revokesBefore + 1);
    expect(slack.revoked.has(slack.issuedTokens.at(-1)!)).toBe(true);
    expect((await api('GET', '/integrations/slack')).status).toBe(404);
    const audit = await api('GET', '/audit-logs?action=slack.uninstalled');
    expect(audit.body.entries.length).toBeGreaterThan(0);
  });
});

describe('deciding from Slack as the organization\'s people', () => {
  const CHANNEL = 'C0DECIDE';
  let people: Record<string, number>;

  beforeAll(async () => {
    expect((await install('code-decide')).status).toBe(200);
    await api('PATCH', '/integrations/slack', { channel_id: CHANNEL });
    people = {};
    for (const [slackId, name, role] of [['U_ANA', 'Ana', 'reviewer'], ['U_BEN', 'Ben', 'reviewer'], ['U_VIEW', 'Vera', 'viewer'], ['U_OLD', 'Olga', 'reviewer']] as const) {
      const email = `${name.toLowerCase()}@slacking.example`;
      slack.users.set(slackId, { email: email.toUpperCase() });
      people[slackId] = (await api('POST', '/users', { email, name, role })).body.id;
    }
    await api('DELETE', `/users/${people.U_OLD}`);
    slack.users.set('U_NOBODY', { email: 'nobody@elsewhere.example' });
  });

  async function postedReview(body: Record<string, unknown> = {}): Promise<{ id: number; message: { channel: string; ts: string } }> {
    const created = await api('POST', '/reviews', { task_type: 'refund', proposed_action: `Refund ${Math.random()}`, ...body });
    await expect.poll(() => slack.messages.some((m) => m.channel === CHANNEL && m.text.includes(`#${created.body.id}:`))).toBe(true);
    const message = slack.messages.find((m) => m.channel === CHANNEL && m.text.includes(`#${created.body.id}:`))!;
    return { id: created.body.id, message: { channel: message.channel, ts: message.ts } };
  }
  const interact = (payload: unknown) => postAsSlack(server.url, '/integrations/slack/interactions', interactionBody(payload), SECRET);
  const ephemeralsTo = (user: string) => slack.callsOf('chat.postEphemeral').filter((c) => c.args.user === user);

  it('Approve decides as the person with the Slack user\'s e-mail, by id and name, in the audit log as theirs', async () => {
    const created = await postedReview();
    await interact(clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
    expect((await api('GET', `/reviews/${created.id}`)).body.decision).toMatchObject({ reviewer_id: people.U_ANA, reviewer_name: 'Ana' });
    const audit = await api('GET', '/audit-logs?action=review.decided');
    const entry = audit.body.entries.find((candidate: { target_id: number }) => candidate.target_id === created.id);
    expect(entry.actor).toEqual({ type: 'user', id: `user:${people.U_ANA}`, label: 'Ana' });
    await expect.poll(() => slack.messages.find((m) => m.ts === created.message.ts)!.updates).toBe(1);
  });

  it('a viewer, a deactivated person and an unknown Slack user decide nothing and are told why', async () => {
    const created = await postedReview();
    for (const user of ['U_VIEW', 'U_OLD', 'U_NOBODY']) await interact(clickPayload('gl.approve', created.id, user, created.message));
    await expect.poll(() => ephemeralsTo('U_VIEW').length + ephemeralsTo('U_OLD').length + ephemeralsTo('U_NOBODY').length).toBe(3);
    expect(ephemeralsTo('U_VIEW')[0].args.text).toBe('You are a viewer in Greenlight, who reads reviews but cannot decide them: nothing changed.');
    expect(ephemeralsTo('U_OLD')[0].args.text).toBe('Your Greenlight account is deactivated: nothing changed.');
    expect(ephemeralsTo('U_NOBODY')[0].args.text).toMatch(/^Your Slack account is not linked to a person of this organization/);
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
  });

  it('a two-approval workflow: the first approval is a vote ("1 of 2"), the second decides', async () => {
    const workflow = await api('POST', '/workflows', { name: 'two reviewers', conditions: { task_type: 'wire' }, stages: [{ name: 'reviewers', approvers: { roles: ['reviewer'] }, required_approvals: 2 }] });
    expect(workflow.status).toBe(201);
    const created = await postedReview({ task_type: 'wire' });
    await interact(clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    await expect.poll(() => ephemeralsTo('U_ANA').some((c) => String(c.args.text).includes('1 of 2'))).toBe(true);
    const message = slack.messages.find((m) => m.ts === created.message.ts)!;
    await expect.poll(() => JSON.stringify(message.blocks).includes('1 of 2 approvals')).toBe(true);
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
    await interact(clickPayload('gl.approve', created.id, 'U_BEN', created.message));
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
    await expect.poll(() => JSON.stringify(message.blocks).includes('*Approved* by Ben')).toBe(true);
  });

  it('an explicit link (slack_user_id) wins over the e-mail, and one Slack user is one person\'s', async () => {
    // U_ZED's Slack e-mail is no one's here; Ben's person is linked to U_ZED by hand.
    slack.users.set('U_ZED', { email: 'zed@personal.example' });
    const linked = await api('PATCH', `/users/${people.U_BEN}`, { slack_user_id: 'U_ZED'.replace('_', '') });
    expect(linked.status).toBe(200);
    expect(linked.body.slack_user_id).toBe('UZED');
    expect((await api('PATCH', `/users/${people.U_ANA}`, { slack_user_id: 'UZED' })).status).toBe(409);
    expect((await api('PATCH', `/users/${people.U_ANA}`, { slack_user_id: 'not-an-id' })).status).toBe(400);
    slack.users.set('UZED', { email: 'zed@personal.example' });
    const created = await postedReview();
    await interact(clickPayload('gl.approve', created.id, 'UZED', created.message));
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
    expect((await api('GET', `/reviews/${created.id}`)).body.decision).toMatchObject({ reviewer_id: people.U_BEN, reviewer_name: 'Ben' });
    expect((await api('PATCH', `/users/${people.U_BEN}`, { slack_user_id: null })).body.slack_user_id).toBeNull();
  });

  it('ignores a click from another workspace than the organization installed', async () => {
    const created = await postedReview();
    const click = clickPayload('gl.approve', created.id, 'U_ANA', created.message) as { user: { team_id: string } };
    click.user.team_id = 'T0OTHER';
    expect((await interact(click)).status).toBe(200);
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
  });
});

describe('without the Slack app\'s credentials', () => {
  it('answers 409 to Add to Slack', async () => {
    const bare = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    try {
      const key = bearer((await call(bare.url, 'POST', '/organizations', { name: 'Bare' }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key);
      const answer = await call(bare.url, 'POST', '/integrations/slack/oauth', undefined, { headers: key });
      expect(answer.status).toBe(409);
    } finally {
      await bare.dispose();
    }
  });
});
