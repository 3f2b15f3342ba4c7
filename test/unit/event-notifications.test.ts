import { expect, it } from 'vitest';
import { EVERY_PROCESS_CHANNEL, notificationAroundId, notifications, ON_DEMAND_CHANNEL, parseNotification } from '../../server/db/event-notifications';
import { amongAnnouncedToAll, type DomainEvent, EventFeed, type Revocation } from '../../server/domain/shared/events';

const created = { type: 'review.created', organization_id: 3, agent_id: null, review_id: 41, payload: { expires_at: 1_800_000_000_000 } } as unknown as DomainEvent;
const createdForever = { type: 'review.created', organization_id: 3, agent_id: null, review_id: 42, payload: { expires_at: null } } as unknown as DomainEvent;
const decided = { type: 'review.decided', organization_id: null, agent_id: 7, review_id: 9, payload: {} } as unknown as DomainEvent;
const feedback = { type: 'feedback.created', organization_id: null, agent_id: 7, review_id: 9, payload: {} } as unknown as DomainEvent;
const revoked: Revocation = { type: 'principal.revoked', principal_id: 'key:5' };

it('says of an entry stored and announced in one statement what a separate notification says of it', () => {
  for (const [entry, id] of [[created, 120], [decided, 121], [revoked, 122], [createdForever, 123]] as const) {
    const { before, after } = notificationAroundId('origin-a', entry);
    const announced = `${before}${id}${after}`;
    expect(announced).toBe(notifications('origin-a', [{ ...entry, id }])[0].payload);
    expect(parseNotification(announced).entries).toHaveLength(1);
  }
  expect(parseNotification(`${notificationAroundId('origin-a', created).before}120${notificationAroundId('origin-a', created).after}`)).toEqual({
    origin: 'origin-a',
    entries: [{ id: 120, type: 'review.created', review_id: 41, expires: true }],
  });
});

it('announces to every process decisions, revocations and reviews that expire, and the rest on demand, in the order written', () => {
  const entries = [{ ...createdForever, id: 1 }, { ...feedback, id: 2 }, { ...decided, id: 3 }, { ...created, id: 4 }, { ...revoked, id: 5 }, { ...feedback, id: 6 }];
  const sent = notifications('origin-c', entries);
  expect(sent.map(({ channel, payload }) => [channel, parseNotification(payload).entries.map((entry) => entry.id)])).toEqual([
    [ON_DEMAND_CHANNEL, [1, 2]],
    [EVERY_PROCESS_CHANNEL, [3, 4, 5]],
    [ON_DEMAND_CHANNEL, [6]],
  ]);
});

it('splits a long list of entries into notifications PostgreSQL accepts, losing none', () => {
  const entries = Array.from({ length: 2_000 }, (_, n) => ({ ...decided, id: 1_000_000 + n, review_id: 500_000 + n }));
  const sent = notifications('origin-b', entries);
  expect(sent.length).toBeGreaterThan(1);
  for (const { payload } of sent) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
  expect(sent.flatMap(({ payload }) => parseNotification(payload).entries.map((entry) => entry.id))).toEqual(entries.map((entry) => entry.id));
});

it('asks for the entries announced on demand while a listener may want them, and the stream that starts waits until they are heard', async () => {
  const feed = new EventFeed();
  const asked: boolean[] = [];
  let heard = (): void => {};
  feed.supplyOnDemand((wanted) => {
    asked.push(wanted);
    return new Promise((resolve) => (heard = resolve));
  });

  const stopWaiter = feed.on('review.decided', () => {}, amongAnnouncedToAll((entry) => entry.review_id === 9));
  const stopDecisions = feed.on('review.decided', () => {});
  expect(asked).toEqual([]);

  const stopStream = feed.subscribe(() => {});
  const stopCreates = feed.on('review.created', () => {});
  expect(asked).toEqual([true]);
  let started = false;
  const starting = feed.heardOnDemand().then(() => (started = true));
  await Promise.resolve();
  expect(started).toBe(false);
  heard();
  await starting;

  stopStream();
  stopStream();
  expect(asked).toEqual([true]);
  stopCreates();
  expect(asked).toEqual([true, false]);
  stopWaiter();
  stopDecisions();
  expect(asked).toEqual([true, false]);
  expect(feed.wantsOnDemand).toBe(false);
});
