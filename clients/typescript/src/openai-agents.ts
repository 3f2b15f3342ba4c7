import type { RunToolApprovalItem } from '@openai/agents';
import type { GreenlightClient } from './client.js';
import { ToolCallReviewer, type ToolInput, type ToolReviewOptions } from './tool-review.js';

/** The part of a run result (or a RunState) the helper needs: its interruptions and the state to answer them on. */
interface InterruptedRun {
  interruptions: RunToolApprovalItem[];
  state: {
    approve(item: RunToolApprovalItem): void;
    reject(item: RunToolApprovalItem, options?: { message?: string }): void;
  };
}

function inputOf(item: RunToolApprovalItem): ToolInput {
  if (typeof item.arguments !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(item.arguments);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as ToolInput) : { input: parsed };
  } catch {
    return { input: item.arguments };
  }
}

function callIdOf(item: RunToolApprovalItem): string | undefined {
  const raw = item.rawItem as { callId?: unknown };
  return typeof raw.callId === 'string' ? raw.callId : undefined;
}

/** The JSON Schema of the function tool the call is of, from the agent that made it. */
function inputSchemaOf(item: RunToolApprovalItem, toolName: string): Record<string, unknown> | undefined {
  const tool = item.agent.tools.find((candidate) => candidate.type === 'function' && candidate.name === toolName);
  return tool?.type === 'function' ? tool.parameters : undefined;
}

/**
 * Answers an OpenAI Agents SDK run's tool approvals (tools with `needsApproval`) with
 * Greenlight decisions; run again with `result.state` afterwards:
 *
 *     const answer = greenlightApprovals(client);
 *     let result = await run(agent, input);
 *     while (result.interruptions.length > 0) {
 *       await answer(result);
 *       result = await run(agent, result.state);
 *     }
 *
 * The SDK runs a call only with the arguments the model gave, so a modification is a
 * rejection whose message gives the model the edited arguments; its call with them is
 * approved without asking again.
 */
export function greenlightApprovals(client: GreenlightClient, options: Partial<ToolReviewOptions> = {}): (run: InterruptedRun) => Promise<void> {
  const reviewer = new ToolCallReviewer(client, { framework: 'openai-agents', ...options });
  return async ({ interruptions, state }) => {
    for (const item of interruptions) {
      const toolName = item.name ?? 'tool';
      const outcome = await reviewer.review({ toolName, input: inputOf(item), toolCallId: callIdOf(item), inputSchema: inputSchemaOf(item, toolName) });
      if (outcome.outcome === 'approve') state.approve(item);
      else if (outcome.outcome === 'edit') state.reject(item, { message: reviewer.editAsRejection(toolName, outcome) });
      else state.reject(item, { message: outcome.message });
    }
  };
}
