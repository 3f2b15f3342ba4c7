import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';
import { clickPayload, FakeSlack, submissionPayload } from '../support/slack';

const CHANNEL = 'C0REVIEWS';

let slack: FakeSlack;
let server: TestServer;
const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);

beforeAll(async () => {
  slack = await FakeSlack.start();
  slack.users.set('U_ANA', { email: 'ana@example.com' });
  // No signing secret and no public URL: Socket Mode alone carries the clicks.
  server = await startTestServer({ slack_api_url: slack.apiUrl, slack_bot_token: slack.options.botToken, slack_app_token: slack.options.appToken, slack_channel: CHANNEL });
  await eventually(() => slack.openConnection() !== undefined, 10_000, 'the Socket Mode connection');
});
afterAll(async () => {
  await server.dispose();
  await slack.stop();
});

async function postedReview(body: Record<string, unknown> = {}): Promise<{ id: number; message: { channel: string; ts: string } }> {
  const created = await api('POST', '/reviews', { ...sampleReview, ...body });
  const id = created.body.id as number;
  await expect.poll(() => slack.messages.some((m) => m.text.includes(`#${id}:`))).toBe(true);
  const message = slack.messages.find((m) => m.text.includes(`#${id}:`))!;
  return { id, message: { channel: message.channel, ts: message.ts } };
}

describe('Slack Socket Mode', () => {
  it('opens the connection with the app token, and acknowledges a click at once; the click decides', async () => {
    expect(slack.callsOf('apps.connections.open')[0].authorization).toBe(`Bearer ${slack.options.appToken}`);
    const created = await postedReview();
    const ack = await slack.sendEnvelope('interactive', clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    expect(ack.payload).toBeUndefined();
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
    expect((await api('GET', `/reviews/${created.id}`)).body.decision.reviewer_name).toBe('ana@example.com');
  });

  it('answers a form in its ack: errors to show, or a decision made', async () => {
    const created = await postedReview({ proposed_action: 'restart the database' });
    const click = clickPayload('gl.modify', created.id, 'U_ANA', created.message);
    await slack.sendEnvelope('interactive', click);
    await expect.poll(() => slack.callsOf('views.open').some((c) => c.args.trigger_id === click.trigger_id)).toBe(true);
    const view = slack.callsOf('views.open').find((c) => c.args.trigger_id === click.trigger_id)!.args.view as Record<string, any>;
    const refused = await slack.sendEnvelope('interactive', submissionPayload(view, 'U_ANA', { action: '', reason: '' }));
    expect(refused.payload).toEqual({ response_action: 'errors', errors: { action: 'Write the action to approve instead, or use Reject.' } });
    const accepted = await slack.sendEnvelope('interactive', submissionPayload(view, 'U_ANA', { action: 'restart the replica', reason: '' }));
    expect(accepted.payload).toBeUndefined();
    expect((await api('GET', `/reviews/${created.id}`)).body).toMatchObject({ status: 'modified', decision: { modified_action: 'restart the replica' } });
  });

  it('handles a retried envelope once, acknowledging both', async () => {
    const created = await postedReview();
    const click = clickPayload('gl.reject', created.id, 'U_ANA', created.message);
    await slack.sendEnvelope('interactive', click);
    await expect.poll(() => slack.callsOf('views.open').some((c) => c.args.trigger_id === click.trigger_id)).toBe(true);
    const view = slack.callsOf('views.open').find((c) => c.args.trigger_id === click.trigger_id)!.args.view as Record<string, any>;
    const submission = submissionPayload(view, 'U_ANA', { reason: 'once' });
    const ephemeralsBefore = slack.callsOf('chat.postEphemeral').length;
    await slack.sendEnvelope('interactive', submission, { envelopeId: 'env-retried' });
    expect((await api('GET', `/reviews/${created.id}`)).body).toMatchObject({ status: 'rejected', decision: { notes: 'once' } });
    // A form is acknowledged once handled: handled again, the retry would have been refused (409) and said so before its ack.
    const retried = await slack.sendEnvelope('interactive', submission, { envelopeId: 'env-retried', retryAttempt: 1 });
    expect(retried).toEqual({ envelope_id: 'env-retried', payload: undefined });
    expect(slack.openConnection()!.acks.filter((a) => a.envelope_id === 'env-retried')).toHaveLength(2);
    expect(slack.callsOf('chat.postEphemeral').length).toBe(ephemeralsBefore);
  });

  it('on disconnect, opens the new connection before closing the old, and carries on over it', async () => {
    const old = slack.openConnection()!;
    slack.disconnect(old);
    await expect.poll(() => old.closed).toBe(true);
    const replacement = slack.openConnection()!;
    expect(replacement.number).toBeGreaterThan(old.number);
    const log = slack.socketLog;
    expect(log.indexOf(`open ${replacement.number}`)).toBeLessThan(log.indexOf(`close ${old.number}`));
    const created = await postedReview();
    await slack.sendEnvelope('interactive', clickPayload('gl.approve', created.id, 'U_ANA', created.message), { connection: replacement });
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
  });

  it('reconnects after the connection drops', async () => {
    const dropped = slack.openConnection()!;
    dropped.socket.terminate();
    await expect.poll(() => slack.openConnection()?.number ?? 0, { timeout: 15_000 }).toBeGreaterThan(dropped.number);
    const created = await postedReview();
    await slack.sendEnvelope('interactive', clickPayload('gl.approve', created.id, 'U_ANA', created.message));
    await expect.poll(async () => (await api('GET', `/reviews/${created.id}`)).body.status).toBe('approved');
  });
});
