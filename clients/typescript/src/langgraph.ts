import type { Decision, HITLRequest, HITLResponse } from 'langchain';
import type { GreenlightClient } from './client.js';
import { ToolCallReviewer, type ToolCallOutcome, type ToolReviewOptions } from './tool-review.js';

/**
 * Answers LangGraph's human-in-the-loop interrupt (the `HITLRequest` that LangChain's
 * `humanInTheLoopMiddleware` raises with `interrupt()`) with Greenlight decisions, one review
 * per action, all filed at once, as the `HITLResponse` to resume with:
 *
 *     const answer = greenlightInterrupts(client);
 *     let state = await agent.invoke(input, config);
 *     while (state.__interrupt__?.length) {
 *       state = await agent.invoke(new Command({ resume: await answer(state.__interrupt__[0].value) }), config);
 *     }
 *
 * A modification resumes as an `edit` with the reviewer's arguments; where the action's
 * review config does not allow `edit`, it is a `reject` that gives the model the edited
 * arguments, and the model's call with them is approved without asking again.
 */
export function greenlightInterrupts(client: GreenlightClient, options: Partial<ToolReviewOptions> = {}): (request: HITLRequest) => Promise<HITLResponse> {
  const reviewer = new ToolCallReviewer(client, { framework: 'langgraph', ...options });
  return async (request) => {
    // Every action is filed at once, so the reviewer sees the whole batch, not one call at a time.
    const decisions = await Promise.all(
      request.actionRequests.map(async (action): Promise<Decision> => {
        const config = request.reviewConfigs.find((candidate) => candidate.actionName === action.name);
        const allowed = config?.allowedDecisions ?? ['approve', 'edit', 'reject'];
        const outcome = await reviewer.review({ toolName: action.name, input: action.args, reasoning: action.description, inputSchema: config?.argsSchema });
        return decisionFor(action.name, outcome, allowed, reviewer);
      }),
    );
    return { decisions };
  };
}

function decisionFor(name: string, outcome: ToolCallOutcome, allowed: readonly string[], reviewer: ToolCallReviewer): Decision {
  if (outcome.outcome === 'reject') return { type: 'reject', message: outcome.message };
  if (outcome.outcome === 'approve' && allowed.includes('approve')) return { type: 'approve' };
  if (allowed.includes('edit')) return { type: 'edit', editedAction: { name, args: outcome.input } };
  if (outcome.outcome === 'edit' && allowed.includes('reject')) return { type: 'reject', message: reviewer.editAsRejection(name, outcome) };
  return { type: 'reject', message: `Greenlight's decision (${outcome.outcome}) is not among the answers this action allows: ${allowed.join(', ')}.` };
}
