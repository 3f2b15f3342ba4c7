import type { ChatInteractions, ChatReply } from '../../domain/chat/interactions';
import type { ChatProvider } from '../../domain/chat/ports';
import type { Log } from '../../domain/shared/unit-of-work';

/** Slack wants an answer within 3 s; past this, a form is closed and its outcome told apart. */
const ANSWER_WITHIN_MS = 2_500;

/** What Slack is answered with: nothing (200, empty), or a `response_action`. */
export type SlackAnswer = Record<string, unknown> | null;

/** Answers Slack's interaction payloads, from whichever transport brought them. */
export interface SlackAnswerer {
  answer(payload: unknown): Promise<SlackAnswer>;
}

function answerOf(reply: ChatReply): SlackAnswer {
  return reply.kind === 'form_errors' ? { response_action: 'errors', errors: reply.errors } : null;
}

/**
 * One interaction payload, from whichever transport brought it (an HTTP request, a Socket Mode
 * envelope), answered within Slack's 3 s: a click is answered at once and handled after (its
 * form must open while the click's trigger lives, which the handling does first); a form waits
 * for its decision, so that what is wrong with it shows in it, unless that takes too long.
 */
export class SlackInbound implements SlackAnswerer {
  constructor(
    private readonly provider: ChatProvider,
    private readonly interactions: ChatInteractions,
    private readonly log: Log,
  ) {}

  async answer(payload: unknown): Promise<SlackAnswer> {
    const interaction = this.provider.parseInteraction(payload);
    const handling = this.interactions.handle(interaction).catch((error: unknown) => {
      this.log.error('a Slack interaction failed', { kind: interaction.kind, error: String(error) });
      return { kind: 'ack' } as ChatReply;
    });
    if (interaction.kind !== 'form') return null;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ChatReply>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'ack' }), ANSWER_WITHIN_MS);
    });
    try {
      return answerOf(await Promise.race([handling, late]));
    } finally {
      clearTimeout(timer);
    }
  }
}
