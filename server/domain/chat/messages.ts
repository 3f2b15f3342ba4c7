import type { ReviewRecord } from '../reviews/records';
import type { PublishedEvent } from '../shared/events';
import type { Clock, Tx } from '../shared/unit-of-work';
import type { ChatMessageRepository } from './ports';

/** The channel a new review is posted to, or null when it goes to none. */
export type ChatDestination = (tx: Tx, review: ReviewRecord) => Promise<string | null>;

/** Writes, in a transaction, what its committed events owe the chat. */
export type ChatEnqueuer = (tx: Tx, events: readonly PublishedEvent[]) => Promise<void>;

/**
 * A new review owes a message (when it has a destination); a decision, a vote or an expiry owes
 * its message an update. Written with the change, like webhook deliveries: nothing is owed for
 * a change that did not commit, nothing is lost when the process dies or the chat is down.
 */
export function chatEnqueuer(messages: ChatMessageRepository, destination: ChatDestination, clock: Clock): ChatEnqueuer {
  return async (tx, events) => {
    const now = clock();
    for (const event of events) {
      if (event.type === 'review.created') {
        const channel = await destination(tx, event.payload);
        if (channel !== null) await messages.enqueuePost(tx, { review_id: event.review_id, organization_id: event.organization_id, channel }, now);
      } else if (event.type === 'review.decided' || event.type === 'review.vote') {
        await messages.markChanged(tx, event.review_id, now);
      }
    }
  };
}
