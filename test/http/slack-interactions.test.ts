import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';
import { clickPayload, FakeSlack, interactionBody, postAsSlack, signSlack, submissionPayload } from '../support/slack';

const SECRET = 'slack-signing-secret-for-tests';
const CHANNEL = 'C0REVIEWS';

let slack: FakeSlack;
let server: TestServer;
const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);
const interact = (payload: unknown) => postAsSlack(server.url, '/integrations/slack/interactions', interactionBody(payload), SECRET);

beforeAll(async () => {
  slack = await FakeSlack.start();
  slack.users.set('U_ANA', { email: 'ana@example.com' });
  slack.users.set('U_BEN', { email: 'ben@example.com' });
  slack.users.set('U_GONE', { email: 'gone@example.com', deleted: true });
  server = await startTestServer({ slack_api_url: slack.apiUrl, slack_bot_token: slack.options.botToken, slack_channel: CHANNEL, slack_signing_secret: SECRET });
});
afterAll(async () => {
  await server.dispose();
  await slack.stop();
});

/** A new review, once its message is in the channel. */
async function postedReview(body: Record<string, unknown> = {}): Promise<{ id: number; message: { channel: string; ts: string } }> {
  const created = await api('POST', '/reviews', { ...sampleReview, ...body });
  expect(created.status).toBe(201);
  const id = created.body.id as number;
  await expect.poll(() => slack.messages.some((m) => m.text.includes(`#${id}:`))).toBe(true);
  const message = slack.messages.find((m) => m.text.includes(`#${id}:`))!;
  return { id, message: { channel: message.channel, ts: message.ts } };
}

function ephemeralsTo(user: string) {
  return slack.callsOf('chat.postEphemeral').filter((c) => c.args.user === user);
}

/** The modal opened by the click whose trigger was `trigger`. */
async function viewOpenedBy(trigger: string): Promise<Record<string, any>> {
  await expect.poll(() => slack.callsOf('views.open').some((c) => c.args.trigger_id === trigger)).toBe(true);
  return slack.callsOf('views.open').find((c) => c.args.trigger_id === trigger)!.args.view as Record<string, any>;
}

describe('POST /integrations/slack/interactions: signatures', () => {
  it('refuses a bad, stale, tampered or missing signature with 401, and nothing changes', async () => {
    const { id, message } = await postedReview();
    const body = interactionBody(clickPayload('gl.approve', id, 'U_ANA', message));
    const now = String(Math.floor(Date.now() / 1000));
    const refused = [
      await postAsSlack(server.url, '/integrations/slack/interactions', body, 'another secret'),
      await postAsSlack(server.url, '/integrations/slack/interactions', body, SECRET, { timestamp: String(Number(now) - 301) }),
      await postAsSlack(server.url, '/integrations/slack/interactions', body, SECRET, { signature: signSlack(SECRET, now, body.replace('gl.approve', 'gl.reject')), timestamp: now }),
      await postAsSlack(server.url, '/integrations/slack/interactions', body, SECRET, { signature: null }),
    ];
    for (const answer of refused) {
      expect(answer.status).toBe(401);
      expect(answer.body.detail).toMatch(/signed by Slack/);
    }
    expect((await api('GET', `/reviews/${id}`)).body.status).toBe('pending');
  });

  it('answers url_verification with its challenge, signed; unsigned, 401', async () => {
    const body = JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'c-123' });
    expect(await postAsSlack(server.url, '/integrations/slack/events', body, SECRET, { contentType: 'application/json' })).toEqual({ status: 200, body: { challenge: 'c-123' } });
    expect((await postAsSlack(server.url, '/integrations/slack/events', body, 'wrong', { contentType: 'application/json' })).status).toBe(401);
  });

  it('refuses a signed body that is not an interaction with 400', async () => {
    const answer = await postAsSlack(server.url, '/integrations/slack/interactions', 'payload=%7Bnot json', SECRET);
    expect(answer.status).toBe(400);
  });
});

describe('deciding from Slack', () => {
  it('Approve decides as the person Slack names, answers a blocking agent, and the message loses its buttons', async () => {
    const created = await postedReview();
    // An agent that waits for the decision.
    const agent = call(server.url, 'GET', `/reviews/${created.id}/decision?wait=30`);
    await expect.poll(() => server.test.waitingCount()).toBeGreaterThan(0);
    const answer = await interact(clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    expect(answer.status).toBe(200);
    const decision = (await agent).body;
    expect(decision).toMatchObject({ decision_type: 'approve', reviewer_name: 'ana@example.com' });
    const message = slack.messages.find((m) => m.ts === created.message.ts)!;
    await expect.poll(() => message.updates).toBe(1);
    expect(JSON.stringify(message.blocks)).toContain('*Approved* by ana@example.com');
    expect(message.blocks.at(-1)!.elements.map((b: { action_id: string }) => b.action_id)).toEqual(['gl.open']);
  });

  it('Reject opens a modal; its submission rejects with the reason', async () => {
    const created = await postedReview();
    const click = clickPayload('gl.reject', created.id, 'U_BEN', created.message);
    expect((await interact(click)).status).toBe(200);
    const view = await viewOpenedBy(click.trigger_id as string);
    expect(view.callback_id).toBe('gl.reject_form');
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
    const submitted = await interact(submissionPayload(view, 'U_BEN', { reason: 'not during the freeze' }));
    expect(submitted).toEqual({ status: 200, body: undefined });
    const review = (await api('GET', `/reviews/${created.id}`)).body;
    expect(review.status).toBe('rejected');
    expect(review.decision).toMatchObject({ reviewer_name: 'ben@example.com', notes: 'not during the freeze' });
  });

  it('Modify opens a modal holding the action; an empty one is refused in the form, an edited one decides', async () => {
    const created = await postedReview({ proposed_action: 'DELETE FROM orders WHERE id = 7' });
    const click = clickPayload('gl.modify', created.id, 'U_ANA', created.message);
    await interact(click);
    const view = await viewOpenedBy(click.trigger_id as string);
    expect(JSON.stringify(view.blocks)).toContain('"initial_value":"DELETE FROM orders WHERE id = 7"');
    const empty = await interact(submissionPayload(view, 'U_ANA', { action: '   ', reason: '' }));
    expect(empty).toEqual({ status: 200, body: { response_action: 'errors', errors: { action: 'Write the action to approve instead, or use Reject.' } } });
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
    await interact(submissionPayload(view, 'U_ANA', { action: 'UPDATE orders SET archived = true WHERE id = 7', reason: 'archive, never delete' }));
    const review = (await api('GET', `/reviews/${created.id}`)).body;
    expect(review.status).toBe('modified');
    expect(review.decision).toMatchObject({ modified_action: 'UPDATE orders SET archived = true WHERE id = 7', notes: 'archive, never delete', reviewer_name: 'ana@example.com' });
  });

  it('Modify of an action longer than a Slack text box says so and links to the dashboard', async () => {
    const created = await postedReview({ proposed_action: 'x'.repeat(3_500) });
    const click = clickPayload('gl.modify', created.id, 'U_ANA', created.message);
    await interact(click);
    const view = await viewOpenedBy(click.trigger_id as string);
    expect(view.submit).toBeUndefined();
    expect(JSON.stringify(view.blocks)).toContain(`longer than the 3,000 characters a Slack text box holds. <http://127.0.0.1:8501/#/reviews/${created.id}|Modify it in the dashboard>`);
  });

  it('a decision made in the dashboard first: the click changes nothing and says so', async () => {
    const created = await postedReview();
    await api('POST', `/reviews/${created.id}/decide`, { decision_type: 'reject', reviewer_name: 'carol' });
    const before = ephemeralsTo('U_ANA').length;
    await interact(clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    await expect.poll(() => ephemeralsTo('U_ANA').length).toBe(before + 1);
    expect(ephemeralsTo('U_ANA').at(-1)!.args.text).toBe(`Review #${created.id} was already decided by carol: nothing changed.`);
    expect((await api('GET', `/reviews/${created.id}`)).body.decision.reviewer_name).toBe('carol');
  });

  it('two clicks at once: one decides, the other is told it came second', async () => {
    const created = await postedReview();
    const [anaBefore, benBefore] = [ephemeralsTo('U_ANA').length, ephemeralsTo('U_BEN').length];
    await Promise.all([interact(clickPayload('gl.approve', created.id, 'U_ANA', created.message)), interact(clickPayload('gl.approve', created.id, 'U_BEN', created.message))]);
    await expect.poll(() => ephemeralsTo('U_ANA').length - anaBefore + ephemeralsTo('U_BEN').length - benBefore).toBe(1);
    const review = (await api('GET', `/reviews/${created.id}`)).body;
    expect(review.status).toBe('approved');
    const loser = review.decision.reviewer_name === 'ana@example.com' ? 'U_BEN' : 'U_ANA';
    expect(ephemeralsTo(loser).at(-1)!.args.text).toMatch(/already decided by (ana|ben)@example.com/);
  });

  it('a deactivated or unknown Slack account decides nothing and is told so', async () => {
    const created = await postedReview();
    await interact(clickPayload('gl.approve', created.id, 'U_GONE', created.message));
    await interact(clickPayload('gl.reject', created.id, 'U_NOBODY', created.message));
    await expect.poll(() => ephemeralsTo('U_GONE').length + ephemeralsTo('U_NOBODY').length).toBe(2);
    expect(ephemeralsTo('U_GONE')[0].args.text).toBe('Your Slack account is deactivated: nothing changed.');
    expect(ephemeralsTo('U_NOBODY')[0].args.text).toBe('Greenlight could not find your Slack account, so nothing changed.');
    expect((await api('GET', `/reviews/${created.id}`)).body.status).toBe('pending');
  });
});

describe('without Slack set up', () => {
  it('refuses every request, signed or not', async () => {
    const bare = await startTestServer();
    try {
      const body = interactionBody({ type: 'block_actions' });
      expect((await postAsSlack(bare.url, '/integrations/slack/interactions', body, SECRET)).status).toBe(401);
    } finally {
      await bare.dispose();
    }
  });
});
