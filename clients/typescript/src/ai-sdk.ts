import type { ToolApprovalStatus } from 'ai';
import type { GreenlightClient } from './client.js';
import { ToolCallReviewer, type ToolInput, type ToolReviewOptions } from './tool-review.js';

export interface AiSdkApprovalOptions extends Partial<ToolReviewOptions> {
  /** The tools a person must approve (names, or a test); default: every tool. */
  tools?: readonly string[] | ((toolName: string) => boolean);
}

/** The part of the AI SDK's approval call the helper reads. */
interface ApprovalCall {
  toolCall: { toolName: string; toolCallId: string; input: unknown };
}

/**
 * An AI SDK 7 `toolApproval` function that asks Greenlight: each call of a reviewed tool
 * waits for a person, and runs only once they approve.
 *
 *     generateText({ model, tools, toolApproval: greenlightToolApproval(client, { tools: ['runCommand'] }) })
 *
 * The AI SDK runs a call only with the arguments the model gave, so a modification is refused
 * with the edited arguments in the reason; when the model calls again with them, that call is
 * approved without asking again.
 */
export function greenlightToolApproval(client: GreenlightClient, options: AiSdkApprovalOptions = {}): (call: ApprovalCall) => Promise<ToolApprovalStatus> {
  const { tools, ...reviewOptions } = options;
  const needsReview = typeof tools === 'function' ? tools : tools ? (name: string) => tools.includes(name) : () => true;
  const reviewer = new ToolCallReviewer(client, { framework: 'ai-sdk', ...reviewOptions });
  return async ({ toolCall }) => {
    if (!needsReview(toolCall.toolName)) return 'not-applicable';
    const input: ToolInput = typeof toolCall.input === 'object' && toolCall.input !== null ? (toolCall.input as ToolInput) : { input: toolCall.input };
    const outcome = await reviewer.review({ toolName: toolCall.toolName, input, toolCallId: toolCall.toolCallId });
    if (outcome.outcome === 'approve') return { type: 'approved', reason: outcome.message };
    if (outcome.outcome === 'edit') return { type: 'denied', reason: reviewer.editAsRejection(toolCall.toolName, outcome) };
    return { type: 'denied', reason: outcome.message };
  };
}
