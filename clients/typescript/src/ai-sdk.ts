import { asSchema, type ToolApprovalResponse, type ToolApprovalStatus } from 'ai';
import type { GreenlightClient } from './client.js';
import { ToolCallReviewer, type ToolInput, type ToolReviewOptions } from './tool-review.js';

export interface AiSdkApprovalOptions extends Partial<ToolReviewOptions> {
  /** The tools a person must approve (names, or a test); default: every tool. */
  tools?: readonly string[] | ((toolName: string) => boolean);
}

/** The parts of an AI SDK tool call the helpers read. */
interface ToolCallPart {
  toolName: string;
  toolCallId: string;
  input: unknown;
}

/** A `tool-approval-request` part of `result.content`, as far as the helpers read it. */
interface ApprovalRequestPart {
  type: string;
  approvalId?: string;
  toolCall?: ToolCallPart;
  isAutomatic?: boolean;
}

type Verdict = { approved: boolean; reason: string };

/** A tool of the AI SDK's tool set, as far as the helpers read it. */
interface ToolOfSet {
  inputSchema?: Parameters<typeof asSchema>[0];
}

/**
 * The tool's input schema as JSON Schema (the AI SDK converts Zod and Standard Schema the
 * same way for the model). A schema it cannot convert leaves the review without one: the
 * schema only adds fields to the reviewer's editor, and must never stand in the call's way.
 */
async function jsonSchemaOf(tool: ToolOfSet | undefined): Promise<Record<string, unknown> | undefined> {
  if (!tool?.inputSchema) return undefined;
  try {
    return (await asSchema(tool.inputSchema).jsonSchema) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Asks Greenlight about one call. The AI SDK runs a call only with the arguments the model
 * gave, so a modification is refused with the edited arguments in the reason; when the model
 * calls again with them, that call is approved without asking again.
 */
function verdictsFrom(client: GreenlightClient, options: AiSdkApprovalOptions): (toolCall: ToolCallPart, tool?: ToolOfSet) => Promise<Verdict> {
  const { tools: _tools, ...reviewOptions } = options;
  const reviewer = new ToolCallReviewer(client, { framework: 'ai-sdk', ...reviewOptions });
  return async (toolCall, tool) => {
    const input: ToolInput = typeof toolCall.input === 'object' && toolCall.input !== null ? (toolCall.input as ToolInput) : { input: toolCall.input };
    const inputSchema = await jsonSchemaOf(tool);
    const outcome = await reviewer.review({ toolName: toolCall.toolName, input, toolCallId: toolCall.toolCallId, inputSchema });
    if (outcome.outcome === 'approve') return { approved: true, reason: outcome.message };
    if (outcome.outcome === 'edit') return { approved: false, reason: reviewer.editAsRejection(toolCall.toolName, outcome) };
    return { approved: false, reason: outcome.message };
  };
}

function toolTest(tools: AiSdkApprovalOptions['tools']): (toolName: string) => boolean {
  if (typeof tools === 'function') return tools;
  return tools ? (name) => tools.includes(name) : () => true;
}

/**
 * An AI SDK 7 `toolApproval` function that asks Greenlight inside the call: each call of a
 * reviewed tool waits for a person, and runs only once they approve.
 *
 *     generateText({ model, tools, toolApproval: greenlightToolApproval(client, { tools: ['runCommand'] }) })
 */
export function greenlightToolApproval(
  client: GreenlightClient,
  options: AiSdkApprovalOptions = {},
): (call: { toolCall: ToolCallPart; tools?: Record<string, ToolOfSet> }) => Promise<ToolApprovalStatus> {
  const needsReview = toolTest(options.tools);
  const verdictOn = verdictsFrom(client, options);
  return async ({ toolCall, tools }) => {
    if (!needsReview(toolCall.toolName)) return 'not-applicable';
    const { approved, reason } = await verdictOn(toolCall, tools?.[toolCall.toolName]);
    return { type: approved ? 'approved' : 'denied', reason };
  };
}

/**
 * For the AI SDK's manual flow (`toolApproval` answering `'user-approval'`, so `generateText`
 * ends with `tool-approval-request` parts): answers each request with a Greenlight decision,
 * as the tool message to add before calling the model again.
 *
 *     const answer = greenlightApprovalResponses(client);
 *     messages.push(...result.responseMessages, { role: 'tool', content: await answer(result.content) });
 *
 * Keep one per conversation: a modification's edited call is let through by the same one.
 */
export function greenlightApprovalResponses(client: GreenlightClient, options: AiSdkApprovalOptions = {}): (content: readonly ApprovalRequestPart[]) => Promise<ToolApprovalResponse[]> {
  const needsReview = toolTest(options.tools);
  const verdictOn = verdictsFrom(client, options);
  return async (content) => {
    const responses: ToolApprovalResponse[] = [];
    for (const part of content) {
      if (part.type !== 'tool-approval-request' || part.isAutomatic || !part.approvalId || !part.toolCall || !needsReview(part.toolCall.toolName)) continue;
      const { approved, reason } = await verdictOn(part.toolCall);
      responses.push({ type: 'tool-approval-response', approvalId: part.approvalId, approved, reason });
    }
    return responses;
  };
}
