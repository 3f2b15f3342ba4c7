import { afterEach, describe, expect, it } from 'vitest';
import { subscribe } from '../support/event-stream';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

describe('GET /events', () => {
  it('gives each event an id that grows; a client resuming with Last-Event-ID gets what it missed, then live events, none twice', async () => {
    server = await startTestServer();
    const first = await subscribe(server.url);
    const seen = (await call(server.url, 'POST', '/reviews', sampleReview)).body;
    await eventually(() => first.events.length === 1, 5_000, 'the first event');
    first.close();
    // While the client is away: a decision, a review and feedback.
    await call(server.url, 'POST', `/reviews/${seen.id}/decide`, { decision_type: 'reject', notes: 'no' });
    const missed = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'made while away' })).body;
    await call(server.url, 'POST', `/reviews/${missed.id}/feedback`, { rating: 4 });

    const resumed = await subscribe(server.url, { headers: { 'last-event-id': String(first.events[0].id) } });
    await eventually(() => resumed.events.length === 3, 5_000, 'the three missed events');
    const live = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'made after the return' })).body;
    await eventually(() => resumed.events.length === 4, 5_000, 'the live event');
    expect(resumed.events.map((e) => [e.event, e.data.id])).toEqual([
      ['review.decided', seen.id],
      ['review.created', missed.id],
      ['feedback.created', expect.any(Number)],
      ['review.created', live.id],
    ]);
    const ids = [first.events[0].id, ...resumed.events.map((e) => e.id)];
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    resumed.close();
  });

  it('publishes no event for a change that did not commit', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    const review = (await call(server.url, 'POST', '/reviews', sampleReview)).body;
    await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' });
    // Refused: already decided; and a review that does not exist.
    expect((await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'reject' })).status).toBe(409);
    expect((await call(server.url, 'POST', '/reviews/999999/feedback', { rating: 1 })).status).toBe(404);
    const marker = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'after the refusals' })).body;
    await eventually(() => stream.events.some((e) => e.data.id === marker.id), 5_000, 'the marker');
    expect(stream.events.map((e) => e.event)).toEqual(['review.created', 'review.decided', 'review.created']);
    stream.close();
  });

  it('streams review.created then review.decided for a review decided through the API', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const review = (await call(server.url, 'POST', '/reviews', sampleReview)).body;
    const decision = (await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve', reviewer_name: 'dana' })).body;

    await eventually(() => stream.events.length >= 2, 5_000, 'two events');
    expect(stream.events[0]).toEqual({ id: expect.any(Number), event: 'review.created', data: review });
    expect(stream.events[1]).toMatchObject({ event: 'review.decided', data: { id: review.id, status: 'approved', decision } });
    stream.close();
  });

  it('carries feedback and attachment events', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    const review = (await call(server.url, 'POST', '/reviews', sampleReview)).body;
    const feedback = (await call(server.url, 'POST', `/reviews/${review.id}/feedback`, { rating: 3 })).body;
    const form = new FormData();
    form.append('file', new Blob(['hi'], { type: 'text/plain' }), 'hi.txt');
    const attachment = (await (await fetch(`${server.url}/reviews/${review.id}/attachments`, { method: 'POST', body: form })).json()) as { id: number };
    await fetch(`${server.url}/attachments/${attachment.id}`, { method: 'DELETE' });

    await eventually(() => stream.events.length >= 4, 5_000, 'four events');
    expect(stream.events.map((e) => e.event)).toEqual(['review.created', 'feedback.created', 'attachment.created', 'attachment.deleted']);
    expect(stream.events[1].data).toEqual(feedback);
    expect(stream.events[2].data).toEqual(attachment);
    expect(stream.events[3].data).toEqual({ id: attachment.id, review_id: review.id });
    stream.close();
  });

  it('sends heartbeat comments while idle', async () => {
    server = await startTestServer({}, { heartbeatMs: 50 });
    const stream = await subscribe(server.url);
    await eventually(() => stream.comments.filter((c) => c === 'keep-alive').length >= 2, 5_000, 'heartbeats');
    stream.close();
  });

  it('releases a stream and its feed subscription when the client disconnects', async () => {
    server = await startTestServer();
    const listenersBefore = server.test.feedListeners();
    const streams = [await subscribe(server.url), await subscribe(server.url)];
    await eventually(() => server!.test.openStreams() === 2, 5_000, 'two streams');
    expect(server.test.feedListeners()).toBe(listenersBefore + 2);

    for (const stream of streams) stream.close();
    await eventually(() => server!.test.openStreams() === 0, 5_000, 'streams released');
    expect(server.test.feedListeners()).toBe(listenersBefore);
  });

  it('ends open streams when the server shuts down', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    await server.close();
    await stream.done;
    expect(server.test.openStreams()).toBe(0);
  });
});

describe('GET /events when the credential it was opened with stops being valid (hosted edition)', () => {
  const OPERATOR_KEY = 'operator-key-for-event-stream-tests-0123456789';
  const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
  let organizationId: number;
  let admin: Record<string, string>;

  /** A hosted server with one organization, `organizationId`, whose admin key `admin` is. */
  async function hostedServer(): Promise<TestServer> {
    const started = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    const created = await call(started.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
    organizationId = created.body.organization.id;
    admin = bearer(created.body.api_key.key);
    return started;
  }

  async function agentKey(on: TestServer, name: string): Promise<{ id: number; headers: Record<string, string> }> {
    const made = await call(on.url, 'POST', `/organizations/${organizationId}/api-keys`, { name, scope: 'agent' }, { headers: admin });
    return { id: made.body.id, headers: bearer(made.body.key) };
  }

  /** A person of the organization, signed in: the cookie and CSRF token a browser would send. */
  async function signedIn(on: TestServer): Promise<{ id: number; cookie: string; csrfToken: string }> {
    const invited = await call(on.url, 'POST', '/users', { email: 'dana@acme.example', name: 'Dana', role: 'reviewer' }, { headers: admin });
    const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
    const accepted = await call(on.url, 'POST', '/invitations/accept', { token, password: 'correct horse battery staple' });
    return { id: invited.body.id, cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0], csrfToken: accepted.body.csrf_token };
  }

  it('ends the stream of a revoked API key, saying why, while another key\'s stream goes on and no client is told of the revocation', async () => {
    server = await hostedServer();
    const [revoked, kept] = [await agentKey(server, 'revoked'), await agentKey(server, 'kept')];
    const [doomed, going] = [await subscribe(server.url, { headers: revoked.headers }), await subscribe(server.url, { headers: kept.headers })];
    const before = (await call(server.url, 'POST', '/reviews', sampleReview, { headers: admin })).body;
    await eventually(() => going.events.length === 1 && doomed.events.length === 1, 5_000, 'the first review on both streams');

    expect((await call(server.url, 'DELETE', `/api-keys/${revoked.id}`, undefined, { headers: admin })).status).toBe(204);
    await doomed.done;
    expect(doomed.comments.at(-1)).toMatch(/^closed: the API key or session this stream was opened with is no longer valid/);

    const after = (await call(server.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'after the revocation' }, { headers: admin })).body;
    await eventually(() => going.events.length === 2, 5_000, 'the second review on the kept stream');
    const resumed = await subscribe(server.url, { headers: { ...kept.headers, 'last-event-id': String(going.events[0].id) } });
    await eventually(() => resumed.events.length === 1, 5_000, 'the missed review');
    expect([...going.events, ...resumed.events].map((e) => [e.event, e.data.id])).toEqual([
      ['review.created', before.id],
      ['review.created', after.id],
      ['review.created', after.id],
    ]);
    expect(server.test.openStreams()).toBe(2);
    going.close();
    resumed.close();
  });

  it('ends a person\'s stream when they are deactivated', async () => {
    server = await hostedServer();
    const person = await signedIn(server);
    const stream = await subscribe(server.url, { headers: { cookie: person.cookie } });
    expect(stream.response.status).toBe(200);
    expect((await call(server.url, 'DELETE', `/users/${person.id}`, undefined, { headers: admin })).status).toBe(204);
    await stream.done;
    expect(stream.comments.at(-1)).toMatch(/^closed: /);
    expect(server.test.openStreams()).toBe(0);
  });

  it('ends a person\'s stream when they sign out', async () => {
    server = await hostedServer();
    const person = await signedIn(server);
    const stream = await subscribe(server.url, { headers: { cookie: person.cookie } });
    expect(stream.response.status).toBe(200);
    expect((await call(server.url, 'DELETE', '/sessions/current', undefined, { headers: { cookie: person.cookie, 'x-csrf-token': person.csrfToken } })).status).toBe(204);
    await stream.done;
    expect(stream.comments.at(-1)).toMatch(/^closed: /);
  });
});
