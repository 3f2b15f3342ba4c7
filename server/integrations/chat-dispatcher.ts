import { createHash } from 'node:crypto';
import { ChatUnavailable, type ChatMessageRepository, type ChatProvider, type ClaimedChatMessage } from '../domain/chat/ports';
import type { ReviewCard } from '../domain/chat/records';
import { type EventFeed, NONE_FROM_ELSEWHERE } from '../domain/shared/events';
import type { Clock, Log } from '../domain/shared/unit-of-work';
import { WakeLoop } from '../system/wake-loop';

/** How long a process holds the messages it sends; past it, another process takes them over (the first died). */
const CLAIM_MS = 60_000;
/** Messages sent at once by one process: the provider's rate limits leave no use for more. */
const BATCH = 8;
/** After a look at the outbox failed (the database unreachable), how soon the next. */
const AFTER_FAILURE_MS = 1_000;
/** The longest one timer waits: other processes' messages due without an event heard here are found by then. */
const MAX_SLEEP_MS = 30_000;
/** Retries without a `Retry-After` back off from a second up to this, and go on until the provider is back. */
const MAX_BACKOFF_MS = 5 * 60_000;

export interface ChatDispatcherOptions {
  messages: ChatMessageRepository;
  /** The provider, with the credentials of the message's organization; null when it has none any more. */
  providerFor: (message: ClaimedChatMessage) => Promise<ChatProvider | null>;
  /** The review as its message shows it now; null once it is gone. */
  cardOf: (reviewId: number) => Promise<ReviewCard | null>;
  feed: EventFeed;
  log: Log;
  clock?: Clock;
}

/** A message as the chat has it now. */
interface Synced {
  message_id: string;
  shown_sha256: string;
}

/** Seconds to wait before attempt `attempts + 1`: 1, 2, 4… up to `MAX_BACKOFF_MS`. */
export function backoffMs(attempts: number): number {
  return Math.min(1000 * 2 ** Math.min(attempts, 20), MAX_BACKOFF_MS);
}

/**
 * Posts the messages the outbox owes the chat and keeps them up to date, in every API process
 * at once without sending one twice (each claims rows for a while): a review created while the
 * provider is down or rate-limiting is posted once it is back, and a message is rewritten with
 * the review as it stands when its turn comes, so updates that pile up go out as one.
 */
export class ChatDispatcher {
  private readonly clock: Clock;
  private readonly loop: WakeLoop;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: ChatDispatcherOptions) {
    this.clock = options.clock ?? Date.now;
    this.loop = new WakeLoop(() => this.sendDue(), (error) => options.log.error('chat dispatcher failed; retrying shortly', { error: String(error) }), AFTER_FAILURE_MS);
  }

  async start(): Promise<void> {
    await this.options.messages.releaseOrphanedClaims();
    // Every committed change may owe a message: look after each. The process that commits a
    // change looks for what it owes; another's would only race it for the rows.
    this.unsubscribe = this.options.feed.subscribe(() => this.wake(), NONE_FROM_ELSEWHERE);
    this.wake();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.loop.stop();
  }

  /** Looks for due messages now. */
  wake(): void {
    this.loop.wake();
  }

  private async sendDue(): Promise<void> {
    for (;;) {
      const now = this.clock();
      const claimed = await this.options.messages.claimDue(now, now + CLAIM_MS, BATCH);
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((message) => this.send(message)));
      if (this.loop.isStopped) return;
    }
    const due = await this.options.messages.nextDue(this.clock());
    this.loop.sleep(due === null ? MAX_SLEEP_MS : Math.min(Math.max(0, due - this.clock()), MAX_SLEEP_MS));
  }

  /** One post or update, and what came of it recorded. Never rejects: an unrecorded outcome waits out its claim. */
  private async send(message: ClaimedChatMessage): Promise<void> {
    const { messages, log } = this.options;
    let sent: Synced | { gone: string };
    try {
      sent = await this.sync(message);
      if ('gone' in sent) {
        await messages.recordFailure(message.id, sent.gone, null, this.clock());
        return;
      }
    } catch (error) {
      await this.failed(message, error);
      return;
    }
    try {
      await messages.recordSynced(message.id, message.version, sent.message_id, sent.shown_sha256, this.clock());
    } catch (error) {
      // Sent but not recorded (the database unreachable): once the claim runs out it is sent again; a post may then appear twice.
      log.error('could not record a chat message that was sent', { review_id: message.review_id, error: String(error) });
    }
  }

  /**
   * Posts the message, or rewrites it unless it would be sent as it shows already (a wait that
   * moved within the minute it shows, a change that reached it before): its id and what it
   * shows, or why it never can be.
   */
  private async sync(message: ClaimedChatMessage): Promise<Synced | { gone: string }> {
    const provider = await this.options.providerFor(message);
    if (provider === null) return { gone: 'the organization has no chat installation any more' };
    const card = await this.options.cardOf(message.review_id);
    if (card === null) return { gone: 'the review is gone' };
    const shown = createHash('sha256').update(provider.drawReview(card)).digest('hex');
    if (message.message_id === null) return { message_id: (await provider.postReview(message.channel, card)).message_id, shown_sha256: shown };
    if (shown !== message.shown_sha256) await provider.updateReview({ channel: message.channel, message_id: message.message_id }, card);
    return { message_id: message.message_id, shown_sha256: shown };
  }

  /** Tried again after the provider's `Retry-After` or a back-off, or never when it can never succeed. */
  private async failed(message: ClaimedChatMessage, error: unknown): Promise<void> {
    const { log } = this.options;
    const transient = !(error instanceof ChatUnavailable) || error.transient;
    const wait = error instanceof ChatUnavailable && error.retryAfterMs !== null ? error.retryAfterMs : backoffMs(message.attempts);
    if (!transient) log.error('a review could not be posted to the chat, and will not be retried', { review_id: message.review_id, error: (error as Error).message });
    try {
      await this.options.messages.recordFailure(message.id, (error as Error).message, transient ? this.clock() + wait : null, this.clock());
    } catch (recording) {
      log.error('could not record a chat message that failed', { review_id: message.review_id, error: String(recording) });
    }
  }
}
