import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, eventually, expectProblem, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-webhook-tests-0123456789';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Received {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

/**
 * Standard Webhooks verification as its specification writes it, independently of the
 * server's code: the secret's bytes key an HMAC-SHA256 of "{id}.{timestamp}.{body}", and any
 * one of the space-separated `v1,` signatures may match.
 */
function verifies(secret: string, message: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = `v1,${createHmac('sha256', key).update(`${message.id}.${message.timestamp}.${message.body}`).digest('base64')}`;
  return message.signature.split(' ').includes(expected);
}

let server: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
/** How each path answers its next requests, in turn; the last answer repeats. */
const script: Record<string, number[]> = {};
let admin: Record<string, string>;

async function webhook(path: string, events?: string[]): Promise<{ id: number; secret: string }> {
  const created = await call(server.url, 'POST', '/webhooks', { url: `${receiverUrl}${path}`, ...(events ? { events } : {}) }, { headers: admin });
  expect(created.status).toBe(201);
  return created.body;
}

const at = (path: string): Received[] => received.filter((message) => message.path === path);

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, id: String(req.headers['webhook-id']), timestamp: String(req.headers['webhook-timestamp']), signature: String(req.headers['webhook-signature']), body });
      if (path === '/redirect') return void res.writeHead(302, { location: `${receiverUrl}/landing` }).end();
      const answers = script[path] ?? [200];
      res.writeHead(answers.length > 1 ? (answers.shift() as number) : answers[0]).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  server = await startTestServer({
    edition: 'hosted',
    operator_key: OPERATOR_KEY,
    webhook_allow_private_targets: true,
    webhook_allow_http: true,
    webhook_retry_schedule: [1, 1, 1],
  });
  const created = await call(server.url, 'POST', '/organizations', { name: 'Hooked' }, { headers: bearer(OPERATOR_KEY) });
  admin = bearer(created.body.api_key.key);
});
afterAll(async () => {
  await server?.dispose();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('webhooks', () => {
  it('deliver each change signed with Standard Webhooks, as {type, timestamp, data}', async () => {
    const { secret } = await webhook('/all');
    expect(secret).toMatch(/^whsec_/);
    const review = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 10' }, { headers: admin });
    const person = await call(server.url, 'POST', '/users', { email: 'dana@hooked.example', name: 'Dana', role: 'reviewer' }, { headers: admin });
    await call(server.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve', reviewer_id: person.body.id }, { headers: admin });
    await eventually(() => at('/all').length >= 2, 10_000, 'both deliveries');
    const [created, decided] = at('/all').map((message) => ({ message, body: JSON.parse(message.body) }));
    expect(created.body).toMatchObject({ type: 'review.created', data: { id: review.body.id, status: 'pending' } });
    expect(decided.body).toMatchObject({ type: 'review.decided', data: { id: review.body.id, status: 'approved', decision: { reviewer_name: 'Dana' } } });
    // The receipt minted with the decision, the one the API answers with too.
    const read = await call(server.url, 'GET', `/reviews/${review.body.id}`, undefined, { headers: admin });
    expect(decided.body.data.decision.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(decided.body.data.decision.receipt).toBe(read.body.decision.receipt);
    for (const { message } of [created, decided]) {
      expect(verifies(secret, message)).toBe(true);
      expect(message.id).toMatch(/^msg_\d+$/);
      expect(Math.abs(Number(message.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    }
    expect(verifies('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', created.message)).toBe(false);
    expect((await call(server.url, 'GET', '/webhooks', undefined, { headers: admin })).body.webhooks[0]).not.toHaveProperty('secret');
  });

  it('retries a receiver that answers 500 until it answers 200, with the same webhook-id', async () => {
    script['/flaky'] = [500, 500, 500, 200];
    const hook = await webhook('/flaky');
    await call(server.url, 'POST', `/webhooks/${hook.id}/test`, undefined, { headers: admin });
    await eventually(() => at('/flaky').filter((message) => message.body.includes('webhook.test')).length >= 4, 15_000, 'four attempts');
    const attempts = at('/flaky').filter((message) => message.body.includes('webhook.test'));
    expect(new Set(attempts.map((message) => message.id)).size).toBe(1);
    const testDelivery = async (): Promise<any> =>
      (await call(server.url, 'GET', `/webhooks/${hook.id}/deliveries`, undefined, { headers: admin })).body.deliveries.find((d: { event_type: string }) => d.event_type === 'webhook.test');
    await expect.poll(async () => (await testDelivery())?.status).toBe('delivered');
    expect(await testDelivery()).toMatchObject({ attempts: 4, last_status_code: 200, last_error: null });
  });

  it('disables an endpoint that answers 410, says why, and writes it to the audit log', async () => {
    script['/gone'] = [410];
    const hook = await webhook('/gone');
    await call(server.url, 'POST', `/webhooks/${hook.id}/test`, undefined, { headers: admin });
    const current = async (): Promise<any> => (await call(server.url, 'GET', `/webhooks/${hook.id}`, undefined, { headers: admin })).body;
    await expect.poll(async () => (await current()).is_active, { timeout: 10_000 }).toBe(false);
    expect((await current()).disabled_reason).toMatch(/410 Gone/);
    const audit = (await call(server.url, 'GET', `/audit-logs?action=webhook.disabled&target_id=${hook.id}`, undefined, { headers: admin })).body.entries;
    expect(audit).toHaveLength(1);
    expect(audit[0].actor.type).toBe('system');
    expectProblem(await call(server.url, 'POST', `/webhooks/${hook.id}/test`, undefined, { headers: admin }), 409, /disabled/);
  });

  it('never follows a redirect: a 302 is a failed attempt, and the place it points at is not called', async () => {
    const hook = await webhook('/redirect');
    await call(server.url, 'POST', `/webhooks/${hook.id}/test`, undefined, { headers: admin });
    const delivery = async (): Promise<any> => (await call(server.url, 'GET', `/webhooks/${hook.id}/deliveries`, undefined, { headers: admin })).body.deliveries[0];
    await expect.poll(async () => (await delivery())?.last_status_code).toBe(302);
    expect(await delivery()).toMatchObject({ status: 'pending', last_error: 'the receiver answered 302' });
    expect(at('/landing')).toEqual([]);
    await call(server.url, 'DELETE', `/webhooks/${hook.id}`, undefined, { headers: admin });
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const hook = await webhook('/rotated');
    const rotated = await call(server.url, 'POST', `/webhooks/${hook.id}/rotate-secret`, undefined, { headers: admin });
    expect(rotated.status).toBe(201);
    await call(server.url, 'POST', `/webhooks/${hook.id}/test`, undefined, { headers: admin });
    await eventually(() => at('/rotated').some((message) => message.body.includes('webhook.test')), 10_000, 'the test delivery');
    const message = at('/rotated').find((m) => m.body.includes('webhook.test'))!;
    expect(message.signature.split(' ')).toHaveLength(2);
    expect(verifies(hook.secret, message)).toBe(true);
    expect(verifies(rotated.body.secret, message)).toBe(true);
  });
});

  it('owe an event only to the active endpoints of its own organization that take its type, one message id per event', async () => {
    const decidedOnly = await webhook('/decided-only', ['review.decided']);
    const paused = await webhook('/paused');
    expect((await call(server.url, 'PATCH', `/webhooks/${paused.id}`, { is_active: false }, { headers: admin })).status).toBe(200);
    const other = await call(server.url, 'POST', '/organizations', { name: 'Elsewhere' }, { headers: bearer(OPERATOR_KEY) });
    const elsewhere = await call(server.url, 'POST', '/webhooks', { url: `${receiverUrl}/elsewhere` }, { headers: bearer(other.body.api_key.key) });
    const takesAll = await webhook('/takes-all');

    const review = await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 12' }, { headers: admin });
    expect(review.status).toBe(201);
    const deliveries = async (id: number, key: Record<string, string> = admin): Promise<Array<{ event_type: string; message_id: string }>> => {
      const listed = await call(server.url, 'GET', `/webhooks/${id}/deliveries`, undefined, { headers: key });
      expect(listed.status).toBe(200);
      return listed.body.deliveries;
    };
    // Written with the create, in its transaction: there to read as soon as it has answered.
    const [created] = await deliveries(takesAll.id);
    expect(created).toMatchObject({ event_type: 'review.created', message_id: expect.stringMatching(/^msg_\d+$/) });
    expect(await deliveries(decidedOnly.id)).toEqual([]);
    expect(await deliveries(paused.id)).toEqual([]);
    expect(await deliveries(elsewhere.body.id, bearer(other.body.api_key.key))).toEqual([]);

    const person = await call(server.url, 'POST', '/users', { email: 'eli@hooked.example', name: 'Eli', role: 'reviewer' }, { headers: admin });
    await call(server.url, 'POST', `/reviews/${review.body.id}/decide`, { decision_type: 'approve', reviewer_id: person.body.id }, { headers: admin });
    const [decided] = await deliveries(decidedOnly.id);
    expect(decided.event_type).toBe('review.decided');
    const toAll = await deliveries(takesAll.id);
    expect(toAll.map((delivery) => delivery.event_type).sort()).toEqual(['review.created', 'review.decided']);
    expect(toAll.find((delivery) => delivery.event_type === 'review.decided')?.message_id).toBe(decided.message_id);
    expect(decided.message_id).not.toBe(created.message_id);
    await eventually(() => at('/takes-all').length >= 2 && at('/decided-only').length >= 1, 10_000, 'the deliveries sent');
    expect(at('/paused')).toEqual([]);
    expect(at('/elsewhere')).toEqual([]);
  });

describe('the SSRF guard, on by default', () => {
  it('refuses a loopback receiver at delivery time, and records why', async () => {
    const guarded = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, webhook_allow_http: true, webhook_retry_schedule: [60] });
    try {
      const created = await call(guarded.url, 'POST', '/organizations', { name: 'Guarded' }, { headers: bearer(OPERATOR_KEY) });
      const key = bearer(created.body.api_key.key);
      expectProblem(await call(guarded.url, 'POST', '/webhooks', { url: 'ftp://example.com/hook' }, { headers: key }), 400, /http/);
      const hook = await call(guarded.url, 'POST', '/webhooks', { url: `${receiverUrl}/guarded` }, { headers: key });
      await call(guarded.url, 'POST', `/webhooks/${hook.body.id}/test`, undefined, { headers: key });
      const delivery = async (): Promise<any> => (await call(guarded.url, 'GET', `/webhooks/${hook.body.id}/deliveries`, undefined, { headers: key })).body.deliveries[0];
      await expect.poll(async () => (await delivery())?.attempts, { timeout: 10_000 }).toBe(1);
      const attempted = await delivery();
      expect(attempted).toMatchObject({ status: 'pending', last_status_code: null });
      expect(attempted.last_error).toMatch(/refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private, link-local or metadata address/);
      expect(at('/guarded')).toEqual([]);
    } finally {
      await guarded.dispose();
    }
  });
});

describe('the limits one organization meets', () => {
  it('refuses an endpoint past max_webhooks_per_organization with 409 naming the limit and the setting; another organization is not held to it', async () => {
    const limited = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, webhook_allow_private_targets: true, webhook_allow_http: true, max_webhooks_per_organization: 3 });
    try {
      const [full, other] = await Promise.all(
        ['Full', 'Other'].map(async (name) => bearer((await call(limited.url, 'POST', '/organizations', { name }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key)),
      );
      const created = await Promise.all(Array.from({ length: 4 }, (_, i) => call(limited.url, 'POST', '/webhooks', { url: `${receiverUrl}/limited/${i}` }, { headers: full })));
      expect(created.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 409]);
      expectProblem(created.find((answer) => answer.status === 409)!, 409, /maximum of 3 webhook endpoints \(max_webhooks_per_organization\)/);
      expect((await call(limited.url, 'GET', '/webhooks', undefined, { headers: full })).body.count).toBe(3);
      expect((await call(limited.url, 'POST', '/webhooks', { url: `${receiverUrl}/limited/other` }, { headers: other })).status).toBe(201);
      const first = created.find((answer) => answer.status === 201)!.body.id;
      expect((await call(limited.url, 'DELETE', `/webhooks/${first}`, undefined, { headers: full })).status).toBe(204);
      expect((await call(limited.url, 'POST', '/webhooks', { url: `${receiverUrl}/limited/again` }, { headers: full })).status).toBe(201);
    } finally {
      await limited.dispose();
    }
  });

  it('sends no more of one organization\'s deliveries at once than webhook_max_in_flight_per_organization: another organization is served while its endpoints hang', async () => {
    const held: http.ServerResponse[] = [];
    let open = 0;
    let most = 0;
    const slow = http.createServer((req, res) => {
      open += 1;
      most = Math.max(most, open);
      res.once('close', () => (open -= 1));
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const shared = await startTestServer({
      edition: 'hosted',
      operator_key: OPERATOR_KEY,
      webhook_allow_private_targets: true,
      webhook_allow_http: true,
      webhook_max_in_flight_per_organization: 2,
    });
    try {
      const [hanging, served] = await Promise.all(
        ['Hanging', 'Served'].map(async (name) => bearer((await call(shared.url, 'POST', '/organizations', { name }, { headers: bearer(OPERATOR_KEY) })).body.api_key.key)),
      );
      for (let i = 0; i < 5; i++) await call(shared.url, 'POST', '/webhooks', { url: `${slowUrl}/hanging/${i}`, events: ['review.created'] }, { headers: hanging });
      await call(shared.url, 'POST', '/webhooks', { url: `${receiverUrl}/served`, events: ['review.created'] }, { headers: served });
      await call(shared.url, 'POST', '/reviews', { task_type: 'hang', proposed_action: 'Hang five receivers' }, { headers: hanging });
      await expect.poll(() => open).toBe(2);
      await call(shared.url, 'POST', '/reviews', { task_type: 'serve', proposed_action: 'Serve one receiver' }, { headers: served });
      await eventually(() => at('/served').length === 1, 10_000, 'the other organization\'s delivery');
      expect(most).toBe(2);
      // Answered one by one, the hanging organization's other three go out, never more than two at once.
      let answered = 0;
      while (answered < 5) {
        await expect.poll(() => held.length).toBeGreaterThan(answered);
        held[answered++].writeHead(200).end();
      }
      expect(most).toBe(2);
    } finally {
      for (const res of held) res.destroy();
      await shared.dispose();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});

describe('two API processes on one PostgreSQL database', () => {
  const secondProcess = (): Promise<TestServer> =>
    startTestServer({
      edition: 'hosted',
      operator_key: OPERATOR_KEY,
      database_url: server.config.database_url,
      webhook_allow_private_targets: true,
      webhook_allow_http: true,
      webhook_retry_schedule: [1, 1, 1],
    });

  it.runIf(TEST_DATABASE_URL)('owe a create through one process to an endpoint made active through the other just before, by an admin key or an agent\'s, and nothing while it was paused', async () => {
    const other = await secondProcess();
    try {
      const made = await call(server.url, 'POST', '/organizations', { name: 'Switched' }, { headers: bearer(OPERATOR_KEY) });
      const key = bearer(made.body.api_key.key);
      const agent = await call(server.url, 'POST', '/agents', { name: 'switch-bot' }, { headers: key });
      const agentKey = await call(server.url, 'POST', `/organizations/${made.body.organization.id}/api-keys`, { name: 'switch-bot key', scope: 'agent', agent_id: agent.body.id }, { headers: key });
      expect(agentKey.status).toBe(201);
      const paused = await call(server.url, 'POST', '/webhooks', { url: `${receiverUrl}/switched`, is_active: false }, { headers: key });
      expect(paused.status).toBe(201);
      const deliveries = async (id: number): Promise<Array<{ event_type: string }>> => (await call(server.url, 'GET', `/webhooks/${id}/deliveries`, undefined, { headers: key })).body.deliveries;
      const create = async (by: Record<string, string>): Promise<void> => {
        expect((await call(other.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: 'Refund EUR 3' }, { headers: by })).status).toBe(201);
      };

      await create(key);
      await create(bearer(agentKey.body.key));
      expect(await deliveries(paused.body.id)).toEqual([]);

      expect((await call(server.url, 'PATCH', `/webhooks/${paused.body.id}`, { is_active: true }, { headers: key })).status).toBe(200);
      await create(key);
      expect(await deliveries(paused.body.id)).toEqual([expect.objectContaining({ event_type: 'review.created' })]);
      await create(bearer(agentKey.body.key));
      expect(await deliveries(paused.body.id)).toHaveLength(2);
      await eventually(() => at('/switched').length === 2, 10_000, 'the two deliveries sent');
    } finally {
      await other.dispose();
    }
  });

  it.runIf(TEST_DATABASE_URL)('deliver each event once between them', async () => {
    const other = await secondProcess();
    try {
      await webhook('/both', ['review.created']);
      const creates = Array.from({ length: 30 }, (_, i) => call(i % 2 ? other.url : server.url, 'POST', '/reviews', { task_type: `twice-${i}`, proposed_action: `Refund ${i}` }, { headers: admin }));
      expect((await Promise.all(creates)).map((answer) => answer.status)).toEqual(Array(30).fill(201));
      await eventually(() => at('/both').length >= 30, 15_000, 'thirty deliveries');
      // Nothing more arrives: a duplicate would come within the dispatchers' next looks.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const ids = at('/both').map((message) => message.id);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
    } finally {
      await other.dispose();
    }
  });
});

describe('the retry schedule, on a clock the test turns', () => {
  it('calls a receiver that answers 500 three times again at 5 s, 5 min and 30 min, and delivers on the fourth attempt', async () => {
    let now = Date.parse('2026-11-24T09:00:00.000Z');
    const clocked = await startTestServer(
      { edition: 'hosted', operator_key: OPERATOR_KEY, webhook_allow_private_targets: true, webhook_allow_http: true },
      { clock: () => now },
    );
    try {
      script['/clocked'] = [500, 500, 500, 200];
      const created = await call(clocked.url, 'POST', '/organizations', { name: 'Clocked' }, { headers: bearer(OPERATOR_KEY) });
      const key = bearer(created.body.api_key.key);
      const hook = await call(clocked.url, 'POST', '/webhooks', { url: `${receiverUrl}/clocked` }, { headers: key });
      await call(clocked.url, 'POST', `/webhooks/${hook.body.id}/test`, undefined, { headers: key });
      const delivery = async (): Promise<any> => (await call(clocked.url, 'GET', `/webhooks/${hook.body.id}/deliveries`, undefined, { headers: key })).body.deliveries[0];
      const dueAfter: number[] = [];
      for (const [attempt, waitSeconds] of [[1, 5], [2, 300], [3, 1_800]] as const) {
        await expect.poll(async () => (await delivery())?.attempts).toBe(attempt);
        const pending = await delivery();
        dueAfter.push((Date.parse(pending.next_attempt_at) - now) / 1000);
        expect(at('/clocked').length).toBe(attempt);
        now += waitSeconds * 1.1 * 1000 + 1000;
        clocked.test.wakeWebhooks();
      }
      await expect.poll(async () => (await delivery())?.status).toBe('delivered');
      expect(await delivery()).toMatchObject({ attempts: 4, last_status_code: 200 });
      expect(at('/clocked')).toHaveLength(4);
      // Each wait within ±10 % of the schedule's.
      [5, 300, 1_800].forEach((seconds, index) => {
        expect(dueAfter[index]).toBeGreaterThanOrEqual(seconds * 0.9);
        expect(dueAfter[index]).toBeLessThanOrEqual(seconds * 1.1);
      });
    } finally {
      await clocked.dispose();
    }
  });
});

describe('the self-hosted edition', () => {
  it('delivers every event to the endpoints of its webhooks setting, signed with their secrets', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=';
    const selfHosted = await startTestServer({
      webhooks: [{ url: `${receiverUrl}/self-hosted`, secret, events: ['review.created'] }],
      webhook_allow_private_targets: true,
      webhook_allow_http: true,
    });
    try {
      const review = await call(selfHosted.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy 1.2.3', organization_id: 7 });
      await eventually(() => at('/self-hosted').length === 1, 10_000, 'the delivery');
      const [message] = at('/self-hosted');
      expect(verifies(secret, message)).toBe(true);
      expect(JSON.parse(message.body)).toMatchObject({ type: 'review.created', data: { id: review.body.id, organization_id: 7 } });
      // The organizations' endpoints API is the hosted edition's.
      expectProblem(await call(selfHosted.url, 'GET', '/webhooks'), 404);
    } finally {
      await selfHosted.dispose();
    }
  });
});
