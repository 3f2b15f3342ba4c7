/** What reviews in a chat workspace need from the world: the provider's API, and the messages' outbox. */

import type { UserRecord } from '../people/records';
import type { Principal } from '../shared/principal';
import type { Tx } from '../shared/unit-of-work';
import type { ChatForm, ChatGrant, ChatInteraction, ChatMessageRef, ChatProfile, ChatUser, ReviewCard } from './records';

/**
 * A chat provider (Slack first; Microsoft Teams could follow): how a review becomes a message,
 * how a click comes back. The transport (HTTP requests, a socket) is the caller's: this only
 * calls the provider's API and reads what arrived.
 */
export interface ChatProvider {
  /** Posts the review to `channel`. Throws `ChatUnavailable` when the provider cannot take it now. */
  postReview(channel: string, card: ReviewCard): Promise<ChatMessageRef>;
  /** Rewrites a posted review's message as the review now stands. */
  updateReview(ref: ChatMessageRef, card: ReviewCard): Promise<void>;
  /** The message as `postReview` and `updateReview` would send it: a rewrite that sends the same is skipped. */
  drawReview(card: ReviewCard): string;
  /** Reads a click or a submitted form from the provider's payload (already authenticated). */
  parseInteraction(payload: unknown): ChatInteraction;
  /** Shows a form to the person who clicked (`trigger` comes with the click). */
  openForm(trigger: string, form: ChatForm): Promise<void>;
  /** What the chat knows of the user, to map them to a person. */
  resolvePerson(user: ChatUser): Promise<ChatProfile>;
  /** A message only `user` sees, beside `ref` (or in `channel`). */
  tellOnly(channel: string, user: ChatUser, text: string): Promise<void>;
}

/** The provider could not take a call now: down, or rate-limiting (`retryAfterMs` when it said). */
export class ChatUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
    /** False: the call will never succeed as it is (a bad token, a channel not found). */
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'ChatUnavailable';
  }
}

/** A review's message as the outbox holds it: to post, or to bring up to date. */
export interface ClaimedChatMessage {
  id: number;
  review_id: number;
  organization_id: number | null;
  channel: string;
  /** Null until posted. */
  message_id: string | null;
  /** The changes to the review the message has been told of; synced once it shows them all. */
  version: number;
  attempts: number;
  /** The SHA-256 of what the message was last sent as (`drawReview`); null until posted. */
  shown_sha256: string | null;
}

/** The messages reviews owe the chat, written with the changes they announce. */
export interface ChatMessageRepository {
  /** A new review's message, to post to `channel`. */
  enqueuePost(tx: Tx, message: { review_id: number; organization_id: number | null; channel: string }, now: number): Promise<void>;
  /**
   * The review changed: its message (if it has one) is due to be updated at `dueAt`, or sooner
   * when something already made it due sooner; a message waiting out the provider keeps waiting.
   */
  markChanged(tx: Tx, reviewId: number, dueAt: number, now: number): Promise<void>;
  /** Holds up to `limit` due messages until `claimedUntil`; several processes never hold the same one. */
  claimDue(now: number, claimedUntil: number, limit: number): Promise<ClaimedChatMessage[]>;
  /** When a message is next due (or another process's claim runs out), or null. */
  nextDue(now: number): Promise<number | null>;
  /** At start, SQLite: gives back what a process that died held (one process owns the file). */
  releaseOrphanedClaims(): Promise<void>;
  /** Sent (or found to show it already): the message shows `version`, drawn as `shownSha256`; posted ones keep their id. */
  recordSynced(id: number, version: number, messageId: string, shownSha256: string, now: number): Promise<void>;
  /** Not sent: tried again at `nextAttemptAt`, or never (`null`) when it cannot succeed. */
  recordFailure(id: number, error: string, nextAttemptAt: number | null, now: number): Promise<void>;
  /** Where the review's message is, once posted. */
  find(reviewId: number): Promise<ChatMessageRef | null>;
}

/** Who a chat user decides as, or why they may not decide at all. */
export type ChatDecider =
  | { ok: true; principal: Principal; reviewer_name: string | null }
  | { ok: false; reason: string };

/** Maps the chat's users to the people who decide reviews. */
export interface ChatDeciders {
  deciderOf(user: ChatUser): Promise<ChatDecider>;
}

/** A provider's OAuth v2 install: where to send the installer, and the code's exchange. */
export interface ChatOAuth {
  authorizeUrl(state: string): string;
  /** Throws `ChatUnavailable` when the provider refuses the code (used, foreign, expired). */
  exchange(code: string): Promise<ChatGrant>;
  /** Revokes a token; a token already dead is fine. */
  revoke(token: string): Promise<void>;
}

/** Seals secrets stored in the database, bound to what they belong to. */
export interface SecretSealer {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

/** A stored installation, with its sealed token. */
export interface StoredChatInstallation {
  organization_id: number;
  team_id: string;
  team_name: string | null;
  bot_user_id: string | null;
  app_id: string | null;
  scopes: string;
  channel_id: string | null;
  token_ciphertext: string | null;
  status: 'active' | 'revoked';
  created_at: number;
  updated_at: number;
}

/** Organizations' chat workspaces and their installs under way. */
export interface ChatInstallationRepository {
  saveState(tx: Tx, stateHash: string, organizationId: number, startedBy: string, expiresAt: number): Promise<void>;
  /** The install a state began, once: the state is gone after. Null for an unknown or expired one. */
  takeState(tx: Tx, stateHash: string, now: number): Promise<{ organization_id: number; started_by: string } | null>;
  /** Replaces the organization's installation. */
  save(tx: Tx, installation: StoredChatInstallation): Promise<void>;
  find(organizationId: number, tx?: Tx): Promise<StoredChatInstallation | null>;
  setChannel(tx: Tx, organizationId: number, channelId: string | null, now: number): Promise<void>;
  delete(tx: Tx, organizationId: number): Promise<void>;
  /** Marks the team's installations revoked and forgets their tokens; the organizations it concerned. */
  revokeTeam(tx: Tx, teamId: string, now: number): Promise<number[]>;
}

/** An organization's person, as a chat user is mapped to them. */
export type ChatPerson = Pick<UserRecord, 'id' | 'organization_id' | 'email' | 'name' | 'role' | 'is_active'>;

/** Finds the organization's person behind a chat user: by the explicit link, or by e-mail. */
export interface ChatPeople {
  byChatUser(organizationId: number, chatUserId: string): Promise<ChatPerson | null>;
  byEmail(organizationId: number, email: string): Promise<ChatPerson | null>;
}
