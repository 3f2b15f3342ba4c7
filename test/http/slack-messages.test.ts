import { QueryTypes } from 'sequelize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';
import { FakeSlack } from '../support/slack';

let slack: FakeSlack;
let server: TestServer;
const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);

const CHANNEL = 'C0REVIEWS';

/** The messages posted about `reviewId` (by the review's number in the header). */
function messagesOf(reviewId: number) {
  return slack.messages.filter((message) => message.text.includes(`#${reviewId}:`));
}

function postsOf(reviewId: number) {
  return slack.callsOf('chat.postMessage').filter((c) => String(c.args.text).includes(`#${reviewId}:`));
}

beforeAll(async () => {
  slack = await FakeSlack.start();
  server = await startTestServer({ slack_api_url: slack.apiUrl, slack_bot_token: slack.options.botToken, slack_channel: CHANNEL });
});
afterAll(async () => {
  await server.dispose();
  await slack.stop();
});
afterEach(() => slack.setDown(false));

describe('reviews posted to Slack through the outbox', () => {
  it('posts each new review once, to the channel, with Block Kit and the bot token', async () => {
    const created = await api('POST', '/reviews', { ...sampleReview, urgency: 'critical', confidence_score: 0.4 });
    expect(created.status).toBe(201);
    await expect.poll(() => messagesOf(created.body.id).length).toBe(1);
    const [message] = messagesOf(created.body.id);
    expect(message.channel).toBe(CHANNEL);
    expect(message.text).toBe(`Review #${created.body.id}: ${sampleReview.task_type} — critical urgency`);
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toContain('*Confidence*\\n40%');
    expect(blocks).toContain(JSON.stringify(sampleReview.proposed_action));
    expect(blocks).toContain(`"url":"http://127.0.0.1:8501/#/reviews/${created.body.id}"`);
    expect(message.blocks.at(-1)!.elements.map((button: { action_id: string }) => button.action_id)).toEqual(['gl.approve', 'gl.reject', 'gl.modify', 'gl.open']);
    expect(postsOf(created.body.id)[0].authorization).toBe(`Bearer ${slack.options.botToken}`);
  });

  it('updates the message when the review is decided: no buttons, the outcome, by whom', async () => {
    const created = await api('POST', '/reviews', sampleReview);
    await expect.poll(() => messagesOf(created.body.id).length).toBe(1);
    const decided = await api('POST', `/reviews/${created.body.id}/decide`, { decision_type: 'reject', reviewer_name: 'ana', notes: 'wrong account' });
    expect(decided.status).toBe(200);
    const [message] = messagesOf(created.body.id);
    await expect.poll(() => message.updates).toBe(1);
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toContain(':x: *Rejected* by ana at');
    expect(blocks).toContain('Reason: wrong account');
    expect(message.blocks.at(-1)!.elements.map((button: { action_id: string }) => button.action_id)).toEqual(['gl.open']);
    expect(postsOf(created.body.id)).toHaveLength(1);
  });

  it('a review created while Slack is down is posted once it is back, once', async () => {
    slack.setDown(true);
    const refusedBefore = slack.refused;
    const created = await api('POST', '/reviews', { ...sampleReview, proposed_action: 'posted after an outage' });
    expect(created.status).toBe(201);
    await expect.poll(() => slack.refused).toBeGreaterThan(refusedBefore);
    expect(messagesOf(created.body.id)).toHaveLength(0);
    slack.setDown(false);
    await expect.poll(() => messagesOf(created.body.id).length, { timeout: 15_000 }).toBe(1);
    // Later changes still reach the same message, and no second one appears.
    await api('POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve' });
    await expect.poll(() => messagesOf(created.body.id)[0].updates).toBe(1);
    expect(postsOf(created.body.id)).toHaveLength(1);
  });

  it('a 429 is waited out for its Retry-After, then the review is posted once', async () => {
    slack.rateLimit('chat.postMessage', 1, 1);
    const created = await api('POST', '/reviews', { ...sampleReview, proposed_action: 'posted after a 429' });
    await expect.poll(() => messagesOf(created.body.id).length, { timeout: 15_000 }).toBe(1);
    expect(postsOf(created.body.id)).toHaveLength(2);
    expect(messagesOf(created.body.id)).toHaveLength(1);
  });

  it('a decision made before the review could be posted is posted as decided, with no buttons', async () => {
    slack.setDown(true);
    const refusedBefore = slack.refused;
    const created = await api('POST', '/reviews', { ...sampleReview, proposed_action: 'decided while Slack was down' });
    await expect.poll(() => slack.refused).toBeGreaterThan(refusedBefore);
    await api('POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve', reviewer_name: 'ana' });
    slack.setDown(false);
    await expect.poll(() => messagesOf(created.body.id).length, { timeout: 15_000 }).toBe(1);
    const [message] = messagesOf(created.body.id);
    expect(JSON.stringify(message.blocks)).toContain('*Approved* by ana');
    expect(message.blocks.at(-1)!.elements).toHaveLength(1);
  });
});

describe('the waiting line, kept true', () => {
  const WAITING = 'An agent is waiting for this decision';
  const shows = (id: number, text: string) => JSON.stringify(messagesOf(id)[0].blocks).includes(text);

  it('is drawn in when an agent starts long-polling a posted review, out when its wait ends, and gone once decided', async () => {
    const created = await api('POST', '/reviews', { ...sampleReview, proposed_action: 'waited on after it was posted' });
    await expect.poll(() => messagesOf(created.body.id).length).toBe(1);
    expect(shows(created.body.id, WAITING)).toBe(false);

    const longPoll = api('GET', `/reviews/${created.body.id}/decision?wait=6`);
    await expect.poll(() => shows(created.body.id, WAITING)).toBe(true);
    const waitingUntil = Date.parse((await api('GET', `/reviews/${created.body.id}`)).body.waiting_until);
    // Shown to the minute, as Slack shows a time.
    expect(JSON.stringify(messagesOf(created.body.id)[0].blocks)).toContain(`<!date^${Math.floor(waitingUntil / 60_000) * 60}^`);
    const answered = await longPoll;
    expect(answered.status).toBe(200);
    expect(answered.body).toBeNull();
    await expect.poll(() => shows(created.body.id, WAITING), { timeout: 15_000 }).toBe(false);

    const updatesBefore = messagesOf(created.body.id)[0].updates;
    expect((await api('POST', `/reviews/${created.body.id}/decide`, { decision_type: 'approve', reviewer_name: 'ana' })).status).toBe(200);
    await expect.poll(() => messagesOf(created.body.id)[0].updates).toBe(updatesBefore + 1);
    const [message] = messagesOf(created.body.id);
    expect(shows(created.body.id, '*Approved* by ana')).toBe(true);
    expect(shows(created.body.id, WAITING)).toBe(false);
    expect(message.blocks.at(-1)!.elements.map((button: { action_id: string }) => button.action_id)).toEqual(['gl.open']);
    expect(postsOf(created.body.id)).toHaveLength(1);
  });

  it('draws waits that start and end together into one rewrite, the last showing no one waiting', async () => {
    const created = await api('POST', '/reviews', { ...sampleReview, proposed_action: 'polled by several at once' });
    await expect.poll(() => messagesOf(created.body.id).length).toBe(1);
    // Long-polls at once rather than in a loop: their waits start and end within the settling
    // time however slowly a busy machine runs the requests, so what is counted does not rest on
    // how far apart a loop's polls happen to fall.
    const polls = 6;
    const answers = await Promise.all(Array.from({ length: polls }, () => api('GET', `/reviews/${created.body.id}/decision?wait=1`)));
    expect(answers.map((answer) => answer.body)).toEqual(Array(polls).fill(null));
    // Every change settled: the message is in sync with the review (a rewrite that would show
    // what it shows already is not sent).
    const inSync = async () => {
      const rows = await server.test.sequelize.query<{ behind: number }>('SELECT version - synced_version AS behind FROM chat_messages WHERE review_id = $id', { bind: { id: created.body.id }, type: QueryTypes.SELECT });
      return rows.length === 1 && Number(rows[0].behind) === 0;
    };
    await expect.poll(inSync, { timeout: 15_000 }).toBe(true);
    expect(shows(created.body.id, WAITING)).toBe(false);
    // Each poll started and ended a wait: twelve changes, drawn together.
    expect(slack.callsOf('chat.update').filter((update) => String(update.args.text).includes(`#${created.body.id}:`)).length).toBeLessThan(polls);
  });
});

describe('channels chosen by routing rules', () => {
  it('posts what a rule with slack_channel_id routes to its channel, and with no slack_channel nothing else', async () => {
    const routed = await startTestServer({
      slack_api_url: slack.apiUrl,
      slack_bot_token: slack.options.botToken,
      slack_channel: '',
      routing: compilePolicy({
        rules: [{ name: 'payments', priority: 10, conditions: { task_type: { operator: '=', value: 'refund' } }, assign_to: 'finance@example.com', slack_channel_id: 'C0FINANCE' }],
      }),
    });
    try {
      const refund = await call(routed.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund order 9 (rule channel)' });
      const other = await call(routed.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy (no channel)' });
      await expect.poll(() => slack.messages.filter((m) => m.text.includes(`#${refund.body.id}:`) && m.channel === 'C0FINANCE').length).toBe(1);
      // The refund's message is the last thing owed; the other review owes none.
      const [{ count }] = (await routed.test.sequelize.query('SELECT COUNT(*) AS count FROM chat_messages WHERE review_id = $id', { bind: { id: other.body.id }, type: 'SELECT' })) as Array<{ count: number }>;
      expect(Number(count)).toBe(0);
    } finally {
      await routed.dispose();
    }
  });
});

describe('an expiry', () => {
  it('updates the message with the policy\'s decision', async () => {
    const expiring = await startTestServer({ slack_api_url: slack.apiUrl, slack_bot_token: slack.options.botToken, slack_channel: CHANNEL, routing: compilePolicy({ expiry: { critical: 1 } }) });
    try {
      const created = await call(expiring.url, 'POST', '/reviews', { task_type: 'expiring', proposed_action: 'expires in a second', urgency: 'critical' });
      // Review ids start again in each server's database: the message is found by its action.
      const ofThisServer = () => slack.messages.filter((m) => m.text.includes(`#${created.body.id}:`) && JSON.stringify(m.blocks).includes('expires in a second'));
      await expect.poll(() => ofThisServer().length).toBe(1);
      const [message] = ofThisServer();
      expect(JSON.stringify(message.blocks)).toContain('Decided by policy if no one decides by');
      await expect.poll(() => message.updates, { timeout: 15_000 }).toBe(1);
      expect(JSON.stringify(message.blocks)).toContain(':alarm_clock: *Expired*');
      expect(message.blocks.at(-1)!.elements).toHaveLength(1);
    } finally {
      await expiring.dispose();
    }
  });
});

describe('without a Slack channel', () => {
  it('posts nothing, and calls Slack for nothing', async () => {
    const quiet = await startTestServer({ slack_api_url: slack.apiUrl, slack_bot_token: '', slack_channel: CHANNEL });
    try {
      const callsBefore = slack.calls.length;
      const created = await call(quiet.url, 'POST', '/reviews', sampleReview);
      expect(created.status).toBe(201);
      const [{ count }] = (await quiet.test.sequelize.query('SELECT COUNT(*) AS count FROM chat_messages', { type: 'SELECT' })) as Array<{ count: number }>;
      expect(Number(count)).toBe(0);
      expect(slack.calls.length).toBe(callsBefore);
    } finally {
      await quiet.dispose();
    }
  });
});
