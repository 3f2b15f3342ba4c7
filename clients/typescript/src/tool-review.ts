import type { AttachmentInput, GreenlightClient, RequestReviewOptions, Review, ReviewInput } from './client.js';
import { ReceiptError } from './receipts.js';

export type ToolInput = Record<string, unknown>;

export interface ToolCall {
  toolName: string;
  input: ToolInput;
  toolCallId?: string;
  /** Shown to the reviewer as the agent's reasoning. */
  reasoning?: string;
  /**
   * The JSON Schema of the tool's input, where the framework knows it: stored in the metadata
   * as `tool_input_schema`, from which the dashboard's editor offers a field per argument.
   */
  inputSchema?: Record<string, unknown>;
  /** Files for the reviewer (the file a call would change), filed with the review. */
  attachments?: AttachmentInput[];
}

/**
 * What the agent's framework should do with the call: run it (with the reviewer's edit, when
 * there is one), or not, telling the model `message`.
 */
export type ToolCallOutcome =
  | { outcome: 'approve'; input: ToolInput; review: Review; message: string }
  | { outcome: 'edit'; input: ToolInput; review: Review; message: string }
  | { outcome: 'reject'; review: Review; message: string };

export interface ToolReviewOptions {
  /** Names the framework in the review (`framework`) and its task type, `<framework>:<tool name>`. */
  framework: string;
  /**
   * Per tool, the one text argument the reviewer reads and edits as the action (e.g. a shell
   * command). A tool whose input is one text argument needs no entry; any other tool is
   * shown, and edited, as JSON.
   */
  editableFields?: Record<string, string>;
  /** Seconds to wait for a decision before the call is refused (fail closed); default: no limit. */
  wait?: number;
  urgency?: ReviewInput['urgency'];
  agentId?: number;
  /** The agent's name as reviewers see it (`agent_name`), for an agent with no registered one. */
  agentName?: string;
  /** Added to every review's metadata (a run id, a user, a ticket). */
  metadata?: Record<string, unknown>;
  signal?: AbortSignal;
  onRetry?: RequestReviewOptions['onRetry'];
}

function editableFieldOf(call: ToolCall, editableFields: Record<string, string> | undefined): string | undefined {
  const named = editableFields?.[call.toolName];
  if (named !== undefined) return typeof call.input[named] === 'string' ? named : undefined;
  const keys = Object.keys(call.input);
  return keys.length === 1 && typeof call.input[keys[0]] === 'string' ? keys[0] : undefined;
}

/** JSON with object keys sorted, so two spellings of the same arguments compare equal. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function isPlainObject(value: unknown): value is ToolInput {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function decidedBy(review: Review): string {
  return `${review.decision?.reviewer_name || 'a reviewer'} in Greenlight review #${review.id}`;
}

function withNotes(sentence: string, review: Review): string {
  const notes = review.decision?.notes;
  return notes ? `${sentence} Notes: ${notes}` : sentence;
}

/**
 * Turns an agent's tool call into a Greenlight review and the decision back into what to run.
 * The action the reviewer reads is the tool's one text argument (a command, a message) or
 * its input as JSON; a modification is read back the same way.
 *
 * Frameworks that cannot run a call with other arguments turn an edit into a refusal that
 * gives the model the edited arguments (`editAsRejection`). The reviewer has approved exactly
 * those, so when the model calls the tool with them, `review` lets that one call through
 * without asking again.
 */
export class ToolCallReviewer {
  private readonly grantedEdits = new Map<string, Review>();

  constructor(
    private readonly client: GreenlightClient,
    private readonly options: ToolReviewOptions,
  ) {}

  async review(call: ToolCall): Promise<ToolCallOutcome> {
    const grantKey = `${call.toolName}\u0000${canonicalJson(call.input)}`;
    const granted = this.grantedEdits.get(grantKey);
    if (granted) {
      this.grantedEdits.delete(grantKey);
      // Checked again: the receipt may have expired while the model made its second call.
      return this.checked(
        { outcome: 'approve', input: call.input, review: granted, message: `These are the arguments ${decidedBy(granted)} changed the call to.` },
        granted.decision?.modified_action ?? '',
      );
    }
    const field = editableFieldOf(call, this.options.editableFields);
    const proposedAction = field ? String(call.input[field]) : JSON.stringify(call.input, null, 2);
    const review = await this.client.requestReview(
      {
        task_type: `${this.options.framework}:${call.toolName}`,
        proposed_action: proposedAction,
        agent_reasoning: call.reasoning,
        framework: this.options.framework,
        urgency: this.options.urgency,
        agent_id: this.options.agentId,
        agent_name: this.options.agentName,
        // The call itself last, so no extra metadata can hide what the reviewer is approving.
        metadata: {
          ...this.options.metadata,
          ...(call.inputSchema ? { tool_input_schema: call.inputSchema } : {}),
          tool_name: call.toolName,
          tool_input: call.input,
          ...(call.toolCallId ? { tool_call_id: call.toolCallId } : {}),
        },
      },
      { wait: this.options.wait ?? true, signal: this.options.signal, onRetry: this.options.onRetry, attachments: call.attachments },
    );
    const outcome = outcomeOf(review, call, field);
    if (outcome.outcome === 'reject') return outcome;
    return this.checked(outcome, outcome.outcome === 'approve' ? proposedAction : (review.decision?.modified_action ?? ''));
  }

  /**
   * Lets a call run only on a receipt of this server's keys, unexpired, for exactly `action`:
   * the text this client proposed, or the reviewer's edit the arguments were read from.
   * Anything else refuses the call (fail closed).
   */
  private async checked(outcome: Exclude<ToolCallOutcome, { outcome: 'reject' }>, action: string): Promise<ToolCallOutcome> {
    try {
      await this.client.verifyReceipt(outcome.review, action);
      return outcome;
    } catch (error) {
      const reason = error instanceof ReceiptError ? error.message : `its receipt could not be checked: ${(error as Error).message}`;
      return { outcome: 'reject', review: outcome.review, message: `Not run: Greenlight review #${outcome.review.id} was decided, but ${reason}.` };
    }
  }

  /**
   * An edit, for a framework that can only approve or refuse a call as the model made it: a
   * refusal that gives the model the edited arguments, remembered so the model's call with
   * them goes through.
   */
  editAsRejection(toolName: string, outcome: Extract<ToolCallOutcome, { outcome: 'edit' }>): string {
    this.grantedEdits.set(`${toolName}\u0000${canonicalJson(outcome.input)}`, outcome.review);
    return withNotes(
      `Not run as proposed: ${decidedBy(outcome.review)} changed the arguments. Call ${toolName} again with exactly these arguments, which are approved: ${JSON.stringify(outcome.input)}`,
      outcome.review,
    );
  }
}

function outcomeOf(review: Review, call: ToolCall, field: string | undefined): ToolCallOutcome {
  const decision = review.decision;
  if (review.status === 'pending' || !decision) {
    return { outcome: 'reject', review, message: `No decision came in Greenlight review #${review.id} in time, so the call was not made.` };
  }
  if (decision.decision_type === 'approve') {
    return { outcome: 'approve', input: call.input, review, message: withNotes(`Approved by ${decidedBy(review)}.`, review) };
  }
  if (decision.decision_type !== 'modify') {
    return { outcome: 'reject', review, message: decision.notes || `Rejected by ${decidedBy(review)}.` };
  }
  const edited = decision.modified_action ?? '';
  if (field) return { outcome: 'edit', input: { ...call.input, [field]: edited }, review, message: withNotes(`Changed by ${decidedBy(review)}.`, review) };
  let parsed: unknown;
  try {
    parsed = JSON.parse(edited);
  } catch {
    parsed = undefined;
  }
  if (!isPlainObject(parsed)) {
    return {
      outcome: 'reject',
      review,
      message: withNotes(`Not run: ${decidedBy(review)} changed the call, but the change is not a JSON object of arguments: ${edited}`, review),
    };
  }
  return { outcome: 'edit', input: parsed, review, message: withNotes(`Changed by ${decidedBy(review)}.`, review) };
}
