/** What a chat workspace (Slack first) is told about reviews, and what comes back from it. */

import type { ReviewRecord } from '../reviews/records';

/** Where a posted review sits in the chat: enough to update it later. */
export interface ChatMessageRef {
  channel: string;
  /** The provider's id of the message (Slack: its `ts`). */
  message_id: string;
}

/** A review as a chat message shows it: the record, and what the record does not carry. */
export interface ReviewCard {
  review: ReviewRecord;
  /** The agent's name, when the review came from a registered agent. */
  agent_name: string | null;
  /** The review in the dashboard. */
  dashboard_url: string;
  /** Whether the message offers Approve, Reject and Modify (else only Open): clicks must have somewhere to go. */
  decidable: boolean;
}

/** Who clicked, as the chat knows them. */
export interface ChatUser {
  team_id: string | null;
  user_id: string;
}

/** What the chat says about a user, to find the person behind them. */
export interface ChatProfile {
  email: string | null;
  deleted: boolean;
}

export type ChatDecisionKind = 'approve' | 'reject' | 'modify';

/** A form the chat shows a reviewer: the reason of a rejection, or the action to modify. */
export type ChatForm =
  | { kind: 'reject'; review_id: number; message: ChatMessageRef | null }
  | { kind: 'modify'; review_id: number; message: ChatMessageRef | null; action: string; dashboard_url: string };

/** What a click or a submitted form asks for, once parsed from the provider's payload. */
export type ChatInteraction =
  | { kind: 'button'; action: ChatDecisionKind; review_id: number; user: ChatUser; trigger_id: string; message: ChatMessageRef | null }
  | { kind: 'form'; action: 'reject' | 'modify'; review_id: number; user: ChatUser; message: ChatMessageRef | null; reason: string | null; modified_action: string | null }
  /** Something the integration does not act on (the Open link's click, a closed modal). */
  | { kind: 'ignored' };

/** A hosted organization's chat workspace as the API shows it: never its token. */
export interface ChatInstallationRecord {
  provider: 'slack';
  team: { id: string; name: string | null };
  bot_user_id: string | null;
  scopes: string[];
  /** The channel new reviews are posted to; null until an admin picks one. */
  channel_id: string | null;
  /** `revoked`: the workspace uninstalled the app or revoked its token; install again. */
  status: 'active' | 'revoked';
  installed_at: string;
  updated_at: string;
}

/** What an OAuth exchange gives: the bot token and the workspace it works in. */
export interface ChatGrant {
  token: string;
  team: { id: string; name: string | null };
  bot_user_id: string | null;
  app_id: string | null;
  scopes: string[];
}
