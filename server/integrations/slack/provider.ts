import type { ChatProvider } from '../../domain/chat/ports';
import type { ChatForm, ChatInteraction, ChatMessageRef, ChatProfile, ChatUser, ReviewCard } from '../../domain/chat/records';
import { ACTION_IDS, FORM_IDS, type FormMetadata, formView, INPUT_IDS, reviewMessage } from './blocks';
import type { SlackWebApi } from './web-api';

type Json = Record<string, unknown>;

function object(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function string(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

const DECISIONS: Record<string, 'approve' | 'reject' | 'modify'> = {
  [ACTION_IDS.approve]: 'approve',
  [ACTION_IDS.reject]: 'reject',
  [ACTION_IDS.modify]: 'modify',
};

function reviewIdOf(value: unknown): number | null {
  const text = string(value);
  return text !== null && /^[1-9]\d{0,15}$/.test(text) ? Number(text) : null;
}

function userOf(payload: Json): ChatUser | null {
  const user = object(payload.user);
  const id = string(user.id);
  if (id === null) return null;
  return { user_id: id, team_id: string(user.team_id) ?? string(object(payload.team).id) };
}

/** A click on one of a review message's buttons (`block_actions`). */
function buttonOf(payload: Json, user: ChatUser): ChatInteraction {
  const [first] = Array.isArray(payload.actions) ? payload.actions : [];
  const action = object(first);
  const decision = DECISIONS[string(action.action_id) ?? ''];
  const reviewId = reviewIdOf(action.value);
  const triggerId = string(payload.trigger_id);
  if (!decision || reviewId === null || triggerId === null) return { kind: 'ignored' };
  const channel = string(object(payload.channel).id) ?? string(object(payload.container).channel_id);
  const ts = string(object(payload.message).ts) ?? string(object(payload.container).message_ts);
  return { kind: 'button', action: decision, review_id: reviewId, user, trigger_id: triggerId, message: channel && ts ? { channel, message_id: ts } : null };
}

/** A submitted modal (`view_submission`): the reason of a rejection, or the modified action. */
function formOf(payload: Json, user: ChatUser): ChatInteraction {
  const view = object(payload.view);
  const callback = string(view.callback_id);
  const action = callback === FORM_IDS.reject ? 'reject' : callback === FORM_IDS.modify ? 'modify' : null;
  if (action === null) return { kind: 'ignored' };
  let metadata: Partial<FormMetadata>;
  try {
    metadata = object(JSON.parse(string(view.private_metadata) ?? '')) as Partial<FormMetadata>;
  } catch {
    return { kind: 'ignored' };
  }
  const reviewId = reviewIdOf(String(metadata.review_id ?? ''));
  if (reviewId === null) return { kind: 'ignored' };
  const values = object(object(view.state).values);
  const input = (block: string) => {
    const value = object(object(values[block])[block]).value;
    return typeof value === 'string' ? value : null;
  };
  const channel = string(metadata.channel);
  const ts = string(metadata.message_id);
  const reason = input(INPUT_IDS.reason);
  return {
    kind: 'form',
    action,
    review_id: reviewId,
    user,
    message: channel && ts ? { channel, message_id: ts } : null,
    reason: reason === null || reason.trim() === '' ? null : reason,
    modified_action: action === 'modify' ? input(INPUT_IDS.action) : null,
  };
}

/** Slack as a chat provider: Block Kit messages and modals over the Web API. */
export class SlackChatProvider implements ChatProvider {
  constructor(private readonly api: SlackWebApi) {}

  async postReview(channel: string, card: ReviewCard): Promise<ChatMessageRef> {
    const answer = await this.api.call('chat.postMessage', { channel, ...reviewMessage(card), unfurl_links: false, unfurl_media: false });
    return { channel: string(answer.channel) ?? channel, message_id: String(answer.ts) };
  }

  async updateReview(ref: ChatMessageRef, card: ReviewCard): Promise<void> {
    await this.api.call('chat.update', { channel: ref.channel, ts: ref.message_id, ...reviewMessage(card) });
  }

  drawReview(card: ReviewCard): string {
    return JSON.stringify(reviewMessage(card));
  }

  parseInteraction(payload: unknown): ChatInteraction {
    const body = object(payload);
    const user = userOf(body);
    if (user === null) return { kind: 'ignored' };
    if (body.type === 'block_actions') return buttonOf(body, user);
    if (body.type === 'view_submission') return formOf(body, user);
    return { kind: 'ignored' };
  }

  async openForm(trigger: string, form: ChatForm): Promise<void> {
    await this.api.call('views.open', { trigger_id: trigger, view: formView(form) });
  }

  async resolvePerson(user: ChatUser): Promise<ChatProfile> {
    const answer = await this.api.call('users.info', { user: user.user_id });
    const found = object(answer.user);
    return { email: string(object(found.profile).email), deleted: found.deleted === true };
  }

  async tellOnly(channel: string, user: ChatUser, text: string): Promise<void> {
    await this.api.call('chat.postEphemeral', { channel, user: user.user_id, text });
  }
}
