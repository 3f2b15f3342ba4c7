import type { ReviewRecord } from '../reviews/records';
import type { PublishedEvent } from '../shared/events';
import type { Clock, Tx } from '../shared/unit-of-work';
import type { ChatMessageRepository } from './ports';

/** The channel a new review is posted to, or null when it goes to none. */
export type ChatDestination = (tx: Tx, review: ReviewRecord) => Promise<string | null>;

/** Writes, in a transaction, what its committed events owe the chat. */
export type ChatEnqueuer = (tx: Tx, events: readonly PublishedEvent[]) => Promise<void>;

/**
 * How long a message in sync waits, once an agent starts or stops waiting on its review, before
 * it is rewritten: an agent long-polling in a loop stops and starts again within it, and the one
 * rewrite then shows where it stands. Slack takes about one update a second per channel.
 */
export const WAITING_SETTLE_MS = 2_000;

/**
 * A new review owes a message (when it has a destination); a decision, a vote or an expiry owes
 * its message an update at once, an agent's wait starting or ending one after
 * `WAITING_SETTLE_MS`. Written with the change, like webhook deliveries: nothing is owed for a
 * change that did not commit, nothing is lost when the process dies or the chat is down.
 */
export function chatEnqueuer(messages: ChatMessageRepository, destination: ChatDestination, clock: Clock): ChatEnqueuer {
  return async (tx, events) => {
    const now = clock();
    for (const event of events) {
      if (event.type === 'review.created') {
        const channel = await destination(tx, event.payload);
        if (channel !== null) await messages.enqueuePost(tx, { review_id: event.review_id, organization_id: event.organization_id, channel }, now);
      } else if (event.type === 'review.decided' || event.type === 'review.vote') {
        await messages.markChanged(tx, event.review_id, now, now);
      } else if (event.type === 'review.waiting') {
        await messages.markChanged(tx, event.review_id, now + WAITING_SETTLE_MS, now);
      }
    }
  };
}
