import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChatUnavailable } from '../../server/domain/chat/ports';
import type { ReviewCard } from '../../server/domain/chat/records';
import type { ReviewRecord } from '../../server/domain/reviews/records';
import { formView, MAX_ACTION_SHOWN, reviewMessage } from '../../server/integrations/slack/blocks';
import { slackManifest } from '../../server/integrations/slack/manifest';
import { SlackChatProvider } from '../../server/integrations/slack/provider';
import { slackSignature, verifySlackSignature } from '../../server/integrations/slack/signature';
import { SlackWebApi } from '../../server/integrations/slack/web-api';
import { pendingReview } from '../support/records';
import { FakeSlack } from '../support/slack';

function review(overrides: Partial<ReviewRecord> = {}): ReviewRecord {
  return pendingReview({ id: 42, task_type: 'deploy', proposed_action: 'kubectl rollout restart deploy/api', confidence_score: 0.82, created_at: '2026-11-26T10:00:00.000Z', updated_at: '2026-11-26T10:00:00.000Z', ...overrides });
}

function card(overrides: Partial<ReviewRecord> = {}, agentName: string | null = 'release-bot'): ReviewCard {
  return { review: review(overrides), agent_name: agentName, dashboard_url: 'http://127.0.0.1:8501/reviews/42', decidable: true };
}

const texts = (blocks: unknown): string => JSON.stringify(blocks);

describe('Slack request signatures', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body = Buffer.from('payload=%7B%22type%22%3A%22block_actions%22%7D');
  const now = 1_764_150_000_000;
  const timestamp = String(now / 1000);

  it('accept what Slack signs: v0= and the hex HMAC-SHA256 of v0:{timestamp}:{body}', () => {
    // The example from Slack's "Verifying requests from Slack".
    const slackBody = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature(secret, '1531420618', slackBody)).toBe('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
    const signature = slackSignature(secret, timestamp, body);
    expect(verifySlackSignature(secret, { timestamp, signature }, body, now)).toEqual({ ok: true });
  });

  it('refuse a bad, stale, tampered or missing signature, and any when no secret is set', () => {
    const signature = slackSignature(secret, timestamp, body);
    const check = (headers: { timestamp?: string; signature?: string }, raw = body, at = now, key = secret) =>
      verifySlackSignature(key, { timestamp: headers.timestamp, signature: headers.signature }, raw, at);
    expect(check({ timestamp, signature: slackSignature('another secret', timestamp, body) })).toEqual({ ok: false, reason: 'the signature does not match' });
    expect(check({ timestamp, signature: signature.slice(0, -1) })).toEqual({ ok: false, reason: 'the signature does not match' });
    expect(check({ timestamp, signature }, Buffer.from(`${body.toString()}x`))).toEqual({ ok: false, reason: 'the signature does not match' });
    expect(check({ timestamp, signature }, body, now + 301_000)).toEqual({ ok: false, reason: 'the timestamp is more than five minutes away' });
    expect(check({ timestamp, signature }, body, now - 301_000)).toEqual({ ok: false, reason: 'the timestamp is more than five minutes away' });
    expect(check({ timestamp, signature }, body, now + 299_000)).toEqual({ ok: true });
    expect(check({ signature })).toEqual({ ok: false, reason: 'the request is not signed' });
    expect(check({ timestamp })).toEqual({ ok: false, reason: 'the request is not signed' });
    expect(check({ timestamp: '1e9', signature })).toEqual({ ok: false, reason: 'the timestamp is not a number of seconds' });
    expect(check({ timestamp, signature }, body, now, '')).toEqual({ ok: false, reason: 'no slack_signing_secret is set' });
  });
});

describe('a review as a Slack message (Block Kit)', () => {
  it('shows the agent, task type, urgency and confidence, the action as a code block, and the four buttons', () => {
    const message = reviewMessage(card());
    expect(message.text).toBe('Review #42: deploy — high urgency');
    expect(message.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Review #42: deploy', emoji: false } });
    expect(message.blocks[1]).toEqual({
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: '*Agent*\nrelease-bot' },
        { type: 'mrkdwn', text: '*Task type*\ndeploy' },
        { type: 'mrkdwn', text: '*Urgency*\nhigh' },
        { type: 'mrkdwn', text: '*Confidence*\n82%' },
      ],
    });
    expect(message.blocks[2]).toEqual({ type: 'rich_text', elements: [{ type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'kubectl rollout restart deploy/api' }] }] });
    const actions = message.blocks.at(-1) as { elements: Array<{ action_id: string; value?: string; url?: string; text: { text: string } }> };
    expect(actions.elements.map((button) => [button.text.text, button.action_id, button.value ?? button.url])).toEqual([
      ['Approve', 'gl.approve', '42'],
      ['Reject', 'gl.reject', '42'],
      ['Modify…', 'gl.modify', '42'],
      ['Open', 'gl.open', 'http://127.0.0.1:8501/reviews/42'],
    ]);
  });

  it('marks hidden characters and escapes what Slack would read as markup', () => {
    const message = reviewMessage(card({ proposed_action: 'rm -rf /tmp/\u202Etxt.exe', task_type: '<!channel> & more' }, 'bot <@U1>'));
    const json = texts(message.blocks);
    expect(json).toContain('rm -rf /tmp/\\\\u{202E}txt.exe');
    expect(json).not.toContain('\u202E');
    expect(json).toContain('The action holds hidden characters');
    expect(json).toContain('&lt;!channel&gt; &amp; more');
    expect(json).toContain('bot &lt;@U1&gt;');
  });

  it('says until when an agent waits on a pending review, and not once it is decided', () => {
    const waiting = texts(reviewMessage(card({ waiting_until: '2026-11-26T10:15:00.000Z' })).blocks);
    expect(waiting).toContain('An agent is waiting for this decision; it gives up at <!date^1795688100^{date_short_pretty} {time}|2026-11-26T10:15:00.000Z>');
    const decided = card({
      status: 'approved',
      waiting_until: null,
      decision: { id: 1, review_id: 42, decision_type: 'approve', reviewer_id: 1, reviewer_name: 'ana', modified_action: null, notes: null, created_at: '2026-11-26T10:05:00.000Z', receipt: null },
    });
    expect(texts(reviewMessage(decided).blocks)).not.toContain('An agent is waiting');
  });

  it('cuts a long action and links to the rest', () => {
    const message = reviewMessage(card({ proposed_action: 'x'.repeat(MAX_ACTION_SHOWN + 500) }));
    const code = message.blocks.find((block) => block.type === 'rich_text') as any;
    expect(code.elements[0].elements[0].text).toHaveLength(MAX_ACTION_SHOWN);
    expect(texts(message.blocks)).toContain('Cut after 2,500 of 3,000 characters: <http://127.0.0.1:8501/reviews/42|the whole action in the dashboard>');
  });

  it('after a decision: no buttons but Open, the outcome, by whom and when, and the reason', () => {
    const message = reviewMessage(
      card({
        status: 'rejected',
        expires_at: '2026-11-26T11:00:00.000Z',
        decision: { id: 1, review_id: 42, decision_type: 'reject', reviewer_id: 3, reviewer_name: 'ana@example.com', modified_action: null, notes: 'not on a Friday', created_at: '2026-11-26T10:05:00.000Z', receipt: null },
      }),
    );
    const json = texts(message.blocks);
    expect(json).toContain(':x: *Rejected* by ana@example.com at <!date^1795687500^{date_short_pretty} {time}|2026-11-26T10:05:00.000Z>');
    expect(json).toContain('Reason: not on a Friday');
    expect(json).not.toContain('Decided by policy');
    const actions = message.blocks.at(-1) as { elements: Array<{ action_id: string }> };
    expect(actions.elements.map((button) => button.action_id)).toEqual(['gl.open']);
    expect(message.text).toBe('Review (rejected) #42: deploy — high urgency');
  });

  it('a vote shows "1 of 2 approvals"; an expiry says so', () => {
    const voted = reviewMessage(card({ workflow: { id: null, name: 'two approvals', stage: 0, stages: [{ name: 'approvers', required_approvals: 2, approvals: 1 }], votes: [], modified_action: null, waiting_on: [], stuck: false } }));
    expect(texts(voted.blocks)).toContain('1 of 2 approvals');
    const expired = reviewMessage(
      card({ status: 'rejected', decision: { id: 1, review_id: 42, decision_type: 'reject', reviewer_id: null, reviewer_name: 'policy:expired', modified_action: null, notes: null, created_at: '2026-11-26T11:00:00.000Z', receipt: null } }),
    );
    expect(texts(expired.blocks)).toContain(':alarm_clock: *Expired*');
  });

  it('the modify form holds the action, unless it is longer than a Slack text box or holds hidden characters', () => {
    const form = (action: string) => formView({ kind: 'modify', review_id: 42, message: null, action, dashboard_url: 'http://d/reviews/42' });
    expect(texts(form('echo hi'))).toContain('"initial_value":"echo hi"');
    const long = form('y'.repeat(3_001));
    expect(long.submit).toBeUndefined();
    expect(texts(long)).toContain('longer than the 3,000 characters a Slack text box holds. <http://d/reviews/42|Modify it in the dashboard>');
    expect(texts(form('a\u200Bb'))).toContain('holds hidden characters');
  });
});

describe('Slack as a ChatProvider, against a fake Slack on loopback', () => {
  let slack: FakeSlack;
  let provider: SlackChatProvider;

  beforeEach(async () => {
    slack = await FakeSlack.start();
    provider = new SlackChatProvider(new SlackWebApi(slack.apiUrl, () => slack.options.botToken));
  });
  afterEach(() => slack.stop());

  it('posts and updates a review with the bot token', async () => {
    const ref = await provider.postReview('C0REVIEWS', card());
    expect(ref).toEqual({ channel: 'C0REVIEWS', message_id: slack.messages[0].ts });
    expect(slack.calls[0].authorization).toBe('Bearer xoxb-test-bot-token');
    await provider.updateReview(ref, card({ status: 'approved', decision: { id: 1, review_id: 42, decision_type: 'approve', reviewer_id: 1, reviewer_name: 'ana', modified_action: null, notes: null, created_at: '2026-11-26T10:05:00.000Z', receipt: null } }));
    expect(slack.messages[0].updates).toBe(1);
    expect(texts(slack.messages[0].blocks)).toContain('*Approved* by ana');
  });

  it('tells a 429 (with its Retry-After) and an outage, which pass, from a bad token, which does not', async () => {
    slack.rateLimit('chat.postMessage', 1, 7);
    const limited = await provider.postReview('C1', card()).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(ChatUnavailable);
    expect(limited).toMatchObject({ retryAfterMs: 7_000, transient: true });
    slack.setDown(true);
    await expect(provider.postReview('C1', card())).rejects.toMatchObject({ name: 'ChatUnavailable', retryAfterMs: null, transient: true });
    slack.setDown(false);
    const wrongToken = new SlackChatProvider(new SlackWebApi(slack.apiUrl, () => 'xoxb-wrong'));
    await expect(wrongToken.postReview('C1', card())).rejects.toMatchObject({ message: "Slack's chat.postMessage answered invalid_auth", transient: false });
    expect(slack.messages).toHaveLength(0);
  });

  it('resolves a person by users.info, and opens forms with the click\'s trigger', async () => {
    slack.users.set('U1', { email: 'ana@example.com' });
    slack.users.set('U2', { email: 'old@example.com', deleted: true });
    expect(await provider.resolvePerson({ team_id: 'T0FAKE', user_id: 'U1' })).toEqual({ email: 'ana@example.com', deleted: false });
    expect(await provider.resolvePerson({ team_id: 'T0FAKE', user_id: 'U2' })).toEqual({ email: 'old@example.com', deleted: true });
    await provider.openForm('trigger-1', { kind: 'reject', review_id: 42, message: { channel: 'C1', message_id: '1.2' } });
    const [open] = slack.callsOf('views.open');
    expect(open.args.trigger_id).toBe('trigger-1');
    expect(JSON.parse((open.args.view as { private_metadata: string }).private_metadata)).toEqual({ review_id: 42, channel: 'C1', message_id: '1.2' });
  });

  it('reads clicks and submitted forms, and ignores what it does not know', () => {
    const user = { id: 'U1', team_id: 'T0FAKE' };
    expect(
      provider.parseInteraction({ type: 'block_actions', user, trigger_id: 't1', channel: { id: 'C1' }, message: { ts: '1.2' }, actions: [{ action_id: 'gl.approve', value: '42' }] }),
    ).toEqual({ kind: 'button', action: 'approve', review_id: 42, user: { user_id: 'U1', team_id: 'T0FAKE' }, trigger_id: 't1', message: { channel: 'C1', message_id: '1.2' } });
    const view = formView({ kind: 'modify', review_id: 42, message: { channel: 'C1', message_id: '1.2' }, action: 'echo hi', dashboard_url: 'http://d' });
    expect(
      provider.parseInteraction({
        type: 'view_submission',
        user,
        view: { callback_id: view.callback_id, private_metadata: view.private_metadata, state: { values: { action: { action: { value: 'echo bye' } }, reason: { reason: { value: '  ' } } } } },
      }),
    ).toEqual({ kind: 'form', action: 'modify', review_id: 42, user: { user_id: 'U1', team_id: 'T0FAKE' }, message: { channel: 'C1', message_id: '1.2' }, reason: null, modified_action: 'echo bye' });
    expect(provider.parseInteraction({ type: 'block_actions', user, trigger_id: 't', actions: [{ action_id: 'gl.open' }] })).toEqual({ kind: 'ignored' });
    expect(provider.parseInteraction({ type: 'block_actions', user, trigger_id: 't', actions: [{ action_id: 'gl.approve', value: '42; drop' }] })).toEqual({ kind: 'ignored' });
    expect(provider.parseInteraction({ type: 'view_closed', user })).toEqual({ kind: 'ignored' });
    expect(provider.parseInteraction('nonsense')).toEqual({ kind: 'ignored' });
  });
});

describe('the Slack app manifest (greenlight slack manifest)', () => {
  it('asks for Socket Mode and no public URL by default, with the four bot scopes and the uninstall events', () => {
    const manifest = slackManifest({ name: 'Greenlight' }) as any;
    expect(manifest.oauth_config.scopes.bot).toEqual(['chat:write', 'im:write', 'users:read', 'users:read.email']);
    expect(manifest.settings).toEqual({
      event_subscriptions: { bot_events: ['app_uninstalled', 'tokens_revoked'] },
      interactivity: { is_enabled: true },
      org_deploy_enabled: false,
      socket_mode_enabled: true,
      token_rotation_enabled: false,
    });
    expect(JSON.stringify(manifest)).not.toContain('request_url');
  });

  it('with a public URL, points Slack at the interactions and events endpoints instead', () => {
    const manifest = slackManifest({ name: 'Reviews', publicApiUrl: 'https://greenlight.example.com/api/' }) as any;
    expect(manifest.settings.socket_mode_enabled).toBe(false);
    expect(manifest.settings.interactivity.request_url).toBe('https://greenlight.example.com/api/integrations/slack/interactions');
    expect(manifest.settings.event_subscriptions.request_url).toBe('https://greenlight.example.com/api/integrations/slack/events');
    expect(manifest.features.bot_user.display_name).toBe('Reviews');
    expect(manifest.oauth_config.redirect_urls).toEqual(['https://greenlight.example.com/api/integrations/slack/oauth/callback']);
  });
});
