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
    const listenersBefore = server.services.feed.listenerCount;
    const streams = [await subscribe(server.url), await subscribe(server.url)];
    await eventually(() => server!.eventStreams.count === 2, 5_000, 'two streams');
    expect(server.services.feed.listenerCount).toBe(listenersBefore + 2);

    for (const stream of streams) stream.close();
    await eventually(() => server!.eventStreams.count === 0, 5_000, 'streams released');
    expect(server.services.feed.listenerCount).toBe(listenersBefore);
  });

  it('ends open streams when the server shuts down', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    await server.close();
    await stream.done;
    expect(server.eventStreams.count).toBe(0);
  });
});
