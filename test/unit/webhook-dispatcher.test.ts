import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { domainEvent, EventFeed, type PublishedEvent } from '../../server/domain/shared/events';
import type { ReviewRecord } from '../../server/domain/reviews/records';
import { OwedDeliveries } from '../../server/domain/webhooks/webhooks';
import type { ClaimedDelivery, WebhookRepository } from '../../server/domain/webhooks/ports';
import type { UnitOfWork } from '../../server/domain/shared/unit-of-work';
import { WebhookDispatcher } from '../../server/webhooks/dispatcher';

let receiver: http.Server;
let url: string;
let received = 0;

beforeEach(async () => {
  received = 0;
  receiver = http.createServer((req, res) => {
    received += 1;
    req.resume();
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterEach(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});

const delivery = (): ClaimedDelivery => ({
  id: 1,
  webhook_id: 1,
  organization_id: 1,
  message_id: 'msg_1',
  payload: '{"type":"review.created"}',
  attempts: 0,
  url,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

/** The outbox as a dispatcher sees it: `claims` answers each look in turn (an Error rejects it); the rest as given. */
function outbox(claims: Array<ClaimedDelivery[] | Error>, rest: Partial<WebhookRepository> = {}): WebhookRepository {
  return {
    releaseOrphanedClaims: async () => undefined,
    claimDue: async () => {
      const next = claims.shift() ?? [];
      if (next instanceof Error) throw next;
      return next;
    },
    nextDue: async () => null,
    recordAttempt: async () => undefined,
    ...rest,
  } as WebhookRepository;
}

function dispatcher(webhooks: WebhookRepository, errors: string[], feed = new EventFeed(), owed = new OwedDeliveries()): WebhookDispatcher {
  return new WebhookDispatcher({
    webhooks,
    unitOfWork: {} as UnitOfWork,
    feed,
    owed,
    scheduleSeconds: [5],
    limits: { inFlight: 4, inFlightPerOrganization: 2 },
    targets: { allowPrivate: true, allowHttp: true },
    log: { info: () => undefined, error: (message) => void errors.push(message) },
  });
}

it('survives an attempt whose outcome cannot be stored: it says so, and the process goes on', async () => {
  const errors: string[] = [];
  const cantOpen = Object.assign(new Error('SQLITE_CANTOPEN: unable to open database file'), { code: 'SQLITE_CANTOPEN' });
  const sender = dispatcher(outbox([[delivery()]], { recordAttempt: async () => Promise.reject(cantOpen) }), errors);
  await sender.start();
  try {
    await expect.poll(() => errors).toContain('could not store the outcome of a webhook delivery attempt');
    expect(received).toBe(1);
  } finally {
    await sender.stop();
  }
});

it('looks at the outbox again after a look failed, with no event to wake it', async () => {
  const errors: string[] = [];
  const sender = dispatcher(outbox([new Error('SQLITE_CANTOPEN: unable to open database file'), [delivery()]]), errors);
  await sender.start();
  try {
    await expect.poll(() => received).toBe(1);
    expect(errors).toEqual(['webhook dispatcher failed; retrying shortly']);
  } finally {
    await sender.stop();
  }
});

it('looks for due deliveries after a commit that wrote some, and not after one that wrote none', async () => {
  let looks = 0;
  let settled = 0;
  const feed = new EventFeed();
  const owed = new OwedDeliveries();
  const sender = dispatcher(
    outbox([], {
      claimDue: async () => {
        looks += 1;
        return [];
      },
      nextDue: async () => {
        settled += 1;
        return null;
      },
    }),
    [],
    feed,
    owed,
  );
  const event = (id: number): PublishedEvent => ({ ...domainEvent('review.created', { id, organization_id: 1, agent_id: null }, { id } as ReviewRecord), id });
  await sender.start();
  try {
    // The look at start, ended: a wake from now on starts a look at once.
    await expect.poll(() => settled).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    feed.publish(event(1));
    expect(looks).toBe(1);
    const owing = event(2);
    owed.mark(owing);
    feed.publish(owing);
    expect(looks).toBe(2);
  } finally {
    await sender.stop();
  }
});
