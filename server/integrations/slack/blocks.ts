import type { ChatForm, ReviewCard } from '../../domain/chat/records';
import { escapeHidden, firstHiddenCharacter } from '../../domain/shared/text';

/** Slack Block Kit, as far as Greenlight builds it. */
export type Block = Record<string, unknown>;

export interface SlackMessage {
  /** The notification's text, and what clients without blocks show. */
  text: string;
  blocks: Block[];
}

/** The action shown in the message; the rest is a click away (Open). Slack cuts a block's text at 3,000. */
export const MAX_ACTION_SHOWN = 2_500;
/** The longest text a plain-text input takes: a longer action is modified in the dashboard. */
export const MAX_INPUT_CHARS = 3_000;

export const ACTION_IDS = { approve: 'gl.approve', reject: 'gl.reject', modify: 'gl.modify', open: 'gl.open' } as const;
export const FORM_IDS = { reject: 'gl.reject_form', modify: 'gl.modify_form' } as const;
export const INPUT_IDS = { reason: 'reason', action: 'action' } as const;

/** The reviewer name an expiry decides as. */
const EXPIRY_REVIEWER = 'policy:expired';

/** Text for `mrkdwn` fields: Slack's three control characters escaped, hidden characters written out. */
export function mrkdwn(text: string): string {
  return escapeHidden(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function plain(text: string, max: number): { type: 'plain_text'; text: string; emoji: boolean } {
  const shown = escapeHidden(text);
  return { type: 'plain_text', text: shown.length <= max ? shown : `${shown.slice(0, max - 1)}…`, emoji: false };
}

/** An ISO time with its seconds dropped. */
function toTheMinute(iso: string): string {
  const time = Date.parse(iso);
  return new Date(time - (time % 60_000)).toISOString();
}

/** A time as each reader's Slack shows it in their own zone, with the ISO time where it cannot. */
function when(iso: string): string {
  return `<!date^${Math.floor(Date.parse(iso) / 1000)}^{date_short_pretty} {time}|${iso}>`;
}

/**
 * The action as a code block: hidden characters written out (`\u{202E}`) as the terminal and
 * notifications show them, cut past `MAX_ACTION_SHOWN`. Preformatted rich text takes the text
 * as it is, so backticks and angle brackets in it cannot break out of the block.
 */
function actionBlocks(card: ReviewCard): Block[] {
  const action = card.review.proposed_action;
  const shown = escapeHidden(action);
  const cut = Array.from(shown).length > MAX_ACTION_SHOWN;
  const blocks: Block[] = [];
  const hidden = firstHiddenCharacter(action);
  if (hidden) {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `:warning: The action holds hidden characters (bidirectional controls, zero-width or control characters); each is shown written out, like \`\\u{${hidden.codePoint.toString(16).toUpperCase()}}\`.` }],
    });
  }
  blocks.push({
    type: 'rich_text',
    elements: [{ type: 'rich_text_preformatted', elements: [{ type: 'text', text: cut ? Array.from(shown).slice(0, MAX_ACTION_SHOWN).join('') : shown }] }],
  });
  if (cut) {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `Cut after ${MAX_ACTION_SHOWN.toLocaleString('en')} of ${Array.from(shown).length.toLocaleString('en')} characters: <${card.dashboard_url}|the whole action in the dashboard>.` }] });
  }
  return blocks;
}

function facts(card: ReviewCard): Block {
  const { review } = card;
  const fields = [
    `*Agent*\n${card.agent_name === null ? (review.framework ? mrkdwn(review.framework) : '—') : mrkdwn(card.agent_name)}`,
    `*Task type*\n${mrkdwn(review.task_type)}`,
    `*Urgency*\n${review.urgency}`,
    `*Confidence*\n${review.confidence_score === null ? 'not given' : `${Math.round(review.confidence_score * 100)}%`}`,
  ];
  return { type: 'section', fields: fields.map((text) => ({ type: 'mrkdwn', text })) };
}

/** Where a pending review stands: its votes, an agent waiting on it, and when it expires. */
function progress(card: ReviewCard): Block[] {
  const { review } = card;
  if (review.status !== 'pending') return [];
  const lines: string[] = [];
  const workflow = review.workflow;
  if (workflow && workflow.stage < workflow.stages.length) {
    const stage = workflow.stages[workflow.stage];
    const ofStages = workflow.stages.length > 1 ? ` (stage ${workflow.stage + 1} of ${workflow.stages.length}, ${mrkdwn(stage.name)})` : '';
    lines.push(`:ballot_box_with_ballot: ${stage.approvals} of ${stage.required_approvals} approvals${ofStages}`);
  }
  // To the minute, as Slack shows a time: a wait that moves within it rewrites nothing.
  if (review.waiting_until) lines.push(`:stopwatch: An agent is waiting for this decision; it gives up at ${when(toTheMinute(review.waiting_until))}`);
  if (review.expires_at) lines.push(`:hourglass_flowing_sand: Decided by policy if no one decides by ${when(review.expires_at)}`);
  return lines.length === 0 ? [] : [{ type: 'context', elements: lines.map((text) => ({ type: 'mrkdwn', text })) }];
}

function outcome(card: ReviewCard): Block[] {
  const decision = card.review.decision;
  if (!decision) return [];
  const at = when(decision.created_at);
  let line: string;
  if (decision.reviewer_name === EXPIRY_REVIEWER) {
    line = `:alarm_clock: *Expired* at ${at}: decided by the policy as *${card.review.status}*`;
  } else {
    const by = decision.reviewer_name ? mrkdwn(decision.reviewer_name) : 'a reviewer';
    const verb = { approve: ':white_check_mark: *Approved*', reject: ':x: *Rejected*', modify: ':pencil2: *Approved with changes*' }[decision.decision_type];
    line = `${verb} by ${by} at ${at}`;
  }
  const blocks: Block[] = [{ type: 'section', text: { type: 'mrkdwn', text: line } }];
  if (decision.notes) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `Reason: ${mrkdwn(decision.notes)}` }] });
  return blocks;
}

function buttons(card: ReviewCard): Block {
  const value = String(card.review.id);
  const open = { type: 'button', action_id: ACTION_IDS.open, text: plain('Open', 75), url: card.dashboard_url };
  if (card.review.status !== 'pending' || !card.decidable) return { type: 'actions', block_id: `gl.review.${value}.done`, elements: [open] };
  return {
    type: 'actions',
    block_id: `gl.review.${value}`,
    elements: [
      { type: 'button', action_id: ACTION_IDS.approve, text: plain('Approve', 75), style: 'primary', value },
      { type: 'button', action_id: ACTION_IDS.reject, text: plain('Reject', 75), style: 'danger', value },
      { type: 'button', action_id: ACTION_IDS.modify, text: plain('Modify…', 75), value },
      open,
    ],
  };
}

/** A review as a Slack message: what it asks, its facts, the action, then the buttons or the outcome. */
export function reviewMessage(card: ReviewCard): SlackMessage {
  const { review } = card;
  const status = review.status === 'pending' ? 'Review' : `Review (${review.status})`;
  const title = `${status} #${review.id}: ${review.task_type}`;
  return {
    text: escapeHidden(`${title} — ${review.urgency} urgency`),
    blocks: [{ type: 'header', text: plain(title, 150) }, facts(card), ...actionBlocks(card), ...progress(card), ...outcome(card), buttons(card)],
  };
}

/** What a form carries through Slack to its submission. */
export interface FormMetadata {
  review_id: number;
  channel: string | null;
  message_id: string | null;
}

/** A multi-line text box whose block and action share `id`, so a submission reads `values[id][id]`. */
function textInput(id: string, label: string, { optional = false, initial }: { optional?: boolean; initial?: string }): Block {
  return {
    type: 'input',
    block_id: id,
    optional,
    label: plain(label, 2000),
    element: { type: 'plain_text_input', action_id: id, multiline: true, max_length: MAX_INPUT_CHARS, ...(initial === undefined ? {} : { initial_value: initial }) },
  };
}

/** A modal (`views.open`): the optional reason of a rejection, or the action to modify. */
export function formView(form: ChatForm): Block {
  const metadata: FormMetadata = { review_id: form.review_id, channel: form.message?.channel ?? null, message_id: form.message?.message_id ?? null };
  const common = { type: 'modal', private_metadata: JSON.stringify(metadata), close: plain('Cancel', 24) };
  if (form.kind === 'reject') {
    return {
      ...common,
      callback_id: FORM_IDS.reject,
      title: plain(`Reject review #${form.review_id}`, 24),
      submit: plain('Reject', 24),
      blocks: [textInput(INPUT_IDS.reason, 'Reason (the agent reads it)', { optional: true })],
    };
  }
  const tooLong = Array.from(form.action).length > MAX_INPUT_CHARS;
  if (tooLong || firstHiddenCharacter(form.action)) {
    // A Slack text box would show hidden characters as nothing: they are edited where they are marked.
    const why = tooLong ? `This action is longer than the ${MAX_INPUT_CHARS.toLocaleString('en')} characters a Slack text box holds.` : 'This action holds hidden characters, which a Slack text box would not show.';
    return {
      ...common,
      title: plain(`Modify review #${form.review_id}`, 24),
      blocks: [
        {
          type: 'section',
          text: { type: 'mrkdwn', text: `${why} <${form.dashboard_url}|Modify it in the dashboard>.` },
        },
      ],
    };
  }
  return {
    ...common,
    callback_id: FORM_IDS.modify,
    title: plain(`Modify review #${form.review_id}`, 24),
    submit: plain('Approve changes', 24),
    blocks: [textInput(INPUT_IDS.action, 'The action to approve instead', { initial: form.action }), textInput(INPUT_IDS.reason, 'Note (optional)', { optional: true })],
  };
}
