import { expect, it } from 'vitest';
import { notificationAroundId, notificationPayloads, parseNotification } from '../../server/db/event-notifications';
import type { DomainEvent, Revocation } from '../../server/domain/shared/events';

const created = { type: 'review.created', organization_id: 3, agent_id: null, review_id: 41, payload: { expires_at: 1_800_000_000_000 } } as unknown as DomainEvent;
const decided = { type: 'review.decided', organization_id: null, agent_id: 7, review_id: 9, payload: {} } as unknown as DomainEvent;
const revoked: Revocation = { type: 'principal.revoked', principal_id: 'key:5' };

it('says of an entry stored and announced in one statement what a separate notification says of it', () => {
  for (const [entry, id] of [[created, 120], [decided, 121], [revoked, 122]] as const) {
    const { before, after } = notificationAroundId('origin-a', entry);
    const announced = `${before}${id}${after}`;
    expect(announced).toBe(notificationPayloads('origin-a', [{ ...entry, id }])[0]);
    expect(parseNotification(announced).entries).toHaveLength(1);
  }
  expect(parseNotification(`${notificationAroundId('origin-a', created).before}120${notificationAroundId('origin-a', created).after}`)).toEqual({
    origin: 'origin-a',
    entries: [{ id: 120, type: 'review.created', review_id: 41, expires: true }],
  });
});

it('splits a long list of entries into notifications PostgreSQL accepts, losing none', () => {
  const entries = Array.from({ length: 2_000 }, (_, n) => ({ ...decided, id: 1_000_000 + n, review_id: 500_000 + n }));
  const payloads = notificationPayloads('origin-b', entries);
  expect(payloads.length).toBeGreaterThan(1);
  for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
  expect(payloads.flatMap((payload) => parseNotification(payload).entries.map((entry) => entry.id))).toEqual(entries.map((entry) => entry.id));
});
