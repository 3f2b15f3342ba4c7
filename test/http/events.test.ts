import { afterEach, describe, expect, it } from 'vitest';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

interface ServerSentEvent {
  event: string;
  data: any;
}

/** Reads an SSE stream with fetch, as the dashboard does, collecting events and comments. */
async function subscribe(url: string, init: RequestInit = {}) {
  const controller = new AbortController();
  const response = await fetch(`${url}/events`, { ...init, signal: controller.signal });
  const events: ServerSentEvent[] = [];
  const comments: string[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          for (const line of block.split('\n')) if (line.startsWith(':')) comments.push(line.slice(1).trim());
          if (fields.event) events.push({ event: fields.event, data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // aborted by the test or ended by the server
    }
  })();
  return { response, events, comments, close: () => controller.abort(), done };
}

describe('GET /events', () => {
  it('streams review.created then review.decided for a review decided through the API', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const review = (await call(server.url, 'POST', '/reviews', sampleReview)).body;
    const decision = (await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve', reviewer_name: 'dana' })).body;

    await eventually(() => stream.events.length >= 2, 5_000, 'two events');
    expect(stream.events[0]).toEqual({ event: 'review.created', data: review });
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

  it('releases a stream and its bus subscriptions when the client disconnects', async () => {
    server = await startTestServer();
    const listenersBefore = server.services.bus.listenerCount('review.created');
    const streams = [await subscribe(server.url), await subscribe(server.url)];
    await eventually(() => server!.eventStreams.count === 2, 5_000, 'two streams');
    expect(server.services.bus.listenerCount('review.created')).toBe(listenersBefore + 2);

    for (const stream of streams) stream.close();
    await eventually(() => server!.eventStreams.count === 0, 5_000, 'streams released');
    expect(server.services.bus.listenerCount('review.created')).toBe(listenersBefore);
  });

  it('ends open streams when the server shuts down', async () => {
    server = await startTestServer();
    const stream = await subscribe(server.url);
    await server.close();
    await stream.done;
    expect(server.eventStreams.count).toBe(0);
  });
});
