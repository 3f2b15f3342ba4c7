import { expect, it } from 'vitest';
import { EventFeed } from '../../server/domain/shared/events';
import { ReviewExpiry } from '../../server/domain/reviews/expiry';
import { NO_POLICY } from '../../server/domain/routing/review-policy';
import type { DueReview } from '../../server/domain/reviews/ports';

/** Turns of the event loop: a pass re-armed for a time already past would run in each of them. */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
}

it('tries a pass whose write failed again a while later, not over and over at once', async () => {
  const now = Date.now();
  const due: DueReview = { id: 1, organization_id: null, urgency: 'high', created_at: now - 60_000, expires_at: now - 1_000 };
  let decisions = 0;
  const expiry = new ReviewExpiry({
    store: { nextExpiry: async () => due.expires_at, dueForExpiry: async () => [due] },
    oneAtATime: {
      run: async (_task, work) => {
        await work();
        return true;
      },
    },
    deciding: {
      decide: async () => {
        decisions += 1;
        throw Object.assign(new Error('SQLITE_CANTOPEN: unable to open database file'), { code: 'SQLITE_CANTOPEN' });
      },
    },
    reading: { workflowSummary: async () => null },
    feed: new EventFeed(),
    policy: () => NO_POLICY,
    log: { info: () => undefined, error: () => undefined },
  });
  try {
    await expiry.start();
    await turns(20);
    expect(decisions).toBeLessThan(3);
  } finally {
    expiry.stop();
  }
});
