import { afterEach, describe, expect, it } from 'vitest';
import { compilePolicy } from '../../server/domain/routing/review-policy';
import type { PublishedEvent } from '../../server/domain/shared/events';
import { subscribe } from '../support/event-stream';
import { startTcpGate } from '../support/tcp-gate';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';

/**
 * Two API processes on one PostgreSQL database: what one commits reaches the other only where
 * something there needs it — a request waiting on the review, a live stream, an expiry timer.
 */
let servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.reverse()) await server.dispose();
  servers = [];
});

/** What reached the feed of the other process's doing: the reader's own waits announce themselves (`review.waiting`). */
const fromWriter = (events: PublishedEvent[]) => events.filter((event) => event.type !== 'review.waiting');

async function twoProcesses(overrides = {}): Promise<[TestServer, TestServer]> {
  const first = await startTestServer(overrides);
  servers.push(first);
  const second = await startTestServer({ ...overrides, database_url: first.config.database_url });
  servers.push(second);
  return [first, second];
}

describe.runIf(TEST_DATABASE_URL)('events between API processes', () => {
  it('reads none of the other process\'s events while nothing here needs them, and a decision once someone here waits on it', async () => {
    const [writer, reader] = await twoProcesses();
    const observed = reader.test.observeFeed();
    const unwatched = (await call(writer.url, 'POST', '/reviews', sampleReview)).body;
    await call(writer.url, 'POST', `/reviews/${unwatched.id}/decide`, { decision_type: 'approve' });
    const awaited = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'Refund order 77' })).body;

    const waiting = call(reader.url, 'GET', `/reviews/${awaited.id}/decision?wait=30`);
    await eventually(() => reader.test.waitingCount() === 1, 5_000, 'the long-poll to wait');
    await call(writer.url, 'POST', `/reviews/${awaited.id}/decide`, { decision_type: 'reject', notes: 'no' });

    expect((await waiting).body).toMatchObject({ review_id: awaited.id, decision_type: 'reject' });
    // Notifications are handled in commit order, so the earlier ones were passed over by now.
    expect(fromWriter(observed.events).map((event) => [event.type, event.review_id])).toEqual([['review.decided', awaited.id]]);
    observed.stop();
  });

  it('reads every event while a live stream is open here, and none once it closes', async () => {
    const [writer, reader] = await twoProcesses();
    const stream = await subscribe(reader.url);
    const review = (await call(writer.url, 'POST', '/reviews', sampleReview)).body;
    await call(writer.url, 'POST', `/reviews/${review.id}/feedback`, { rating: 5 });
    await eventually(() => stream.events.length === 2, 5_000, 'both events on the stream');
    expect(stream.events.map((event) => event.event)).toEqual(['review.created', 'feedback.created']);
    stream.close();
    await eventually(() => reader.test.openStreams() === 0, 5_000, 'the stream to close');

    const observed = reader.test.observeFeed();
    await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'after the stream' });
    const marker = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'waited on' })).body;
    const waiting = call(reader.url, 'GET', `/reviews/${marker.id}/decision?wait=30`);
    await eventually(() => reader.test.waitingCount() === 1, 5_000, 'the long-poll to wait');
    await call(writer.url, 'POST', `/reviews/${marker.id}/decide`, { decision_type: 'approve' });
    await waiting;
    expect(fromWriter(observed.events).map((event) => event.type)).toEqual(['review.decided']);
    observed.stop();
  });

  it('gives a stream every event the other process commits once the stream has started, however often streams open and close', async () => {
    const [writer, reader] = await twoProcesses();
    for (let round = 1; round <= 5; round++) {
      const stream = await subscribe(reader.url);
      // Sent the moment the stream's headers are in: the reader hears of such events only
      // while a stream wants them, and must hear of this one.
      const review = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: `round ${round}` })).body;
      await eventually(() => stream.events.some((event) => event.data.id === review.id), 5_000, `round ${round}'s review on the stream`);
      expect(stream.events.map((event) => [event.event, event.data.id])).toEqual([['review.created', review.id]]);
      stream.close();
      await eventually(() => reader.test.openStreams() === 0, 5_000, 'the stream to close');
    }
  });

  it('starts a stream only once its process hears of what the others commit: while its database holds that back, the stream waits', async () => {
    const gate = await startTcpGate(TEST_DATABASE_URL!);
    try {
      const writer = await startTestServer();
      servers.push(writer);
      const reader = await startTestServer({ database_url: gate.through(writer.config.database_url!) });
      servers.push(reader);

      gate.hold();
      let started = false;
      const starting = subscribe(reader.url).then((stream) => ((started = true), stream));
      await gate.somethingHeld();
      const before = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'while held' })).body;
      // Committed while the reader could not have heard of it: a stream started by now would miss it.
      expect(started).toBe(false);
      gate.release();

      const stream = await starting;
      const after = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'once started' })).body;
      await eventually(() => stream.events.some((event) => event.data.id === after.id), 5_000, 'the review created once the stream started');
      expect(stream.events.map((event) => event.data.id)).not.toContain(before.id);
      stream.close();
    } finally {
      gate.release();
      for (const server of servers.reverse()) await server.dispose();
      servers = [];
      await gate.close();
    }
  });

  it('tells the other process of a review that expires, so its expiry timer fires should the first process stop', async () => {
    const [writer, reader] = await twoProcesses({ routing: compilePolicy({ expiry: { critical: '1h' } }) });
    const observed = reader.test.observeFeed();
    await call(writer.url, 'POST', '/reviews', { ...sampleReview, urgency: 'low' });
    const expiring = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, urgency: 'critical' })).body;
    expect(expiring.expires_at).not.toBeNull();

    await eventually(() => observed.events.length > 0, 5_000, 'the expiring review to reach the other process');
    const marker = (await call(writer.url, 'POST', '/reviews', { ...sampleReview, urgency: 'critical', proposed_action: 'marker' })).body;
    await eventually(() => observed.events.some((event) => event.review_id === marker.id), 5_000, 'the marker');
    expect(observed.events.map((event) => [event.type, event.review_id])).toEqual([
      ['review.created', expiring.id],
      ['review.created', marker.id],
    ]);
    observed.stop();
  });
});
