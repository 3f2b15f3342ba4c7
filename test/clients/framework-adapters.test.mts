import { GreenlightClient } from '@greenlight/client';
import { greenlightApprovalResponses, greenlightToolApproval } from '@greenlight/client/ai-sdk';
import { greenlightInterrupts } from '@greenlight/client/langgraph';
import { greenlightApprovals } from '@greenlight/client/openai-agents';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, type AgentInputItem, type Model, type ModelRequest, type ModelResponse, run, setTracingDisabled, tool as agentsTool, Usage } from '@openai/agents';
import { Command, MemorySaver } from '@langchain/langgraph';
import { generateText, isStepCount, type ModelMessage, tool as aiTool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { AIMessage, createAgent, fakeModel, humanInTheLoopMiddleware, type BaseMessage, tool as langchainTool } from 'langchain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decide, pendingReviewOf } from '../support/client.mjs';
import { call, startTestServer, type TestServer } from '../support/server.js';

// Each adapter driven by its framework's own package and a scripted model: the tool runs only
// after approve, never after reject, and with the reviewer's arguments after modify.

setTracingDisabled(true);

type Decision = { decision_type: 'approve' } | { decision_type: 'reject'; notes: string } | { decision_type: 'modify'; modified_action: string };

const PROPOSED = 'rm -rf build';
const EDITED = 'rm -rf build/tmp';

const DECISIONS: Array<[string, Decision, string[]]> = [
  ['approve', { decision_type: 'approve' }, [PROPOSED]],
  ['reject', { decision_type: 'reject', notes: 'Not on a Friday.' }, []],
  ['modify', { decision_type: 'modify', modified_action: EDITED }, [EDITED]],
];

/**
 * The arguments a refusal handed the model when the reviewer edited the call, as a model that
 * follows the instruction would read them.
 */
function editedArgumentsIn(refusal: string): Record<string, unknown> | undefined {
  const json = /which are approved: (\{.*?\})(?: Notes:|$)/s.exec(refusal)?.[1];
  return json ? JSON.parse(json) : undefined;
}

let server: TestServer;
let client: GreenlightClient;
beforeEach(async () => {
  server = await startTestServer();
  client = new GreenlightClient({ baseUrl: server.url });
});
afterEach(() => server.dispose());

/** Decides the first review of `taskType` once it is waiting. */
async function reviewer(taskType: string, decision: Decision): Promise<number> {
  const reviewId = await pendingReviewOf(server.url, taskType);
  await decide(server.url, reviewId, decision);
  return reviewId;
}

async function reviewCount(taskType: string): Promise<number> {
  return (await call(server.url, 'GET', `/reviews?task_type=${encodeURIComponent(taskType)}`)).body.total;
}

/** The tool's input schema the adapter put in the review's metadata, for the dashboard's editor. */
async function schemaFiledWith(taskType: string): Promise<unknown> {
  return (await call(server.url, 'GET', `/reviews?task_type=${encodeURIComponent(taskType)}`)).body.reviews[0].metadata.tool_input_schema;
}

const COMMAND_SCHEMA = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };

describe('AI SDK: greenlightToolApproval', () => {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

  /** Calls runCommand with `rm -rf build`; after a refusal with edited arguments, calls it with those; then stops. */
  function scriptedModel(): MockLanguageModelV4 {
    return new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        const last = prompt.at(-1);
        const call = (id: string, input: unknown) => ({
          content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'runCommand', input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls' as const, raw: undefined },
          usage,
          warnings: [],
        });
        if (last?.role === 'user') return call('call-1', { command: PROPOSED });
        const result = last?.role === 'tool' ? last.content.find((part) => part.type === 'tool-result') : undefined;
        const edited = result?.output.type === 'execution-denied' ? editedArgumentsIn(result.output.reason ?? '') : undefined;
        if (edited) return call('call-2', edited);
        return { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] };
      },
    });
  }

  it.each(DECISIONS)('%s', async (_name, decision, expectedRuns) => {
    const runs: string[] = [];
    const model = scriptedModel();
    const decided = reviewer('ai-sdk:runCommand', decision);
    const result = await generateText({
      model,
      prompt: 'Clean the build directory.',
      stopWhen: isStepCount(5),
      tools: {
        runCommand: aiTool({
          inputSchema: z.object({ command: z.string() }),
          execute: async ({ command }) => {
            runs.push(command);
            return 'ok';
          },
        }),
      },
      toolApproval: greenlightToolApproval(client, { tools: ['runCommand'] }),
    });
    await decided;
    expect(runs).toEqual(expectedRuns);
    expect(result.text).toBe('done');
    expect(await reviewCount('ai-sdk:runCommand')).toBe(1);
    expect(await schemaFiledWith('ai-sdk:runCommand')).toMatchObject(COMMAND_SCHEMA);
    if (decision.decision_type === 'reject') {
      const denial = model.doGenerateCalls[1].prompt.at(-1);
      expect(JSON.stringify(denial)).toContain('Not on a Friday.');
    }
  });

  it.each(DECISIONS)('%s, in the manual flow (approval requests answered between calls)', async (_name, decision, expectedRuns) => {
    const runs: string[] = [];
    const model = scriptedModel();
    const tools = {
      runCommand: aiTool({
        inputSchema: z.object({ command: z.string() }),
        execute: async ({ command }) => {
          runs.push(command);
          return 'ok';
        },
      }),
    };
    const answer = greenlightApprovalResponses(client);
    const decided = reviewer('ai-sdk:runCommand', decision);
    const messages: ModelMessage[] = [{ role: 'user', content: 'Clean the build directory.' }];
    for (;;) {
      const result = await generateText({ model, tools, toolApproval: { runCommand: 'user-approval' }, messages, stopWhen: isStepCount(5) });
      messages.push(...result.responseMessages);
      const responses = await answer(result.content);
      if (responses.length === 0) {
        expect(result.text).toBe('done');
        break;
      }
      messages.push({ role: 'tool', content: responses });
    }
    await decided;
    expect(runs).toEqual(expectedRuns);
    expect(await reviewCount('ai-sdk:runCommand')).toBe(1);
  });

  it('leaves tools it was not asked about alone', async () => {
    const runs: string[] = [];
    await generateText({
      model: scriptedModel(),
      prompt: 'Clean up.',
      stopWhen: isStepCount(3),
      tools: { runCommand: aiTool({ inputSchema: z.object({ command: z.string() }), execute: async ({ command }) => (runs.push(command), 'ok') }) },
      toolApproval: greenlightToolApproval(client, { tools: ['sendEmail'] }),
    });
    expect(runs).toEqual([PROPOSED]);
    expect(await reviewCount('ai-sdk:runCommand')).toBe(0);
  });
});

describe('OpenAI Agents SDK: greenlightApprovals', () => {
  /** The same script as a Model of the Agents SDK. */
  class ScriptedModel implements Model {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const items = (Array.isArray(request.input) ? request.input : []) as AgentInputItem[];
      const last = items.at(-1);
      const functionCall = (callId: string, args: unknown): ModelResponse => ({
        usage: new Usage(),
        output: [{ type: 'function_call', callId, name: 'run_command', arguments: JSON.stringify(args), status: 'completed' }],
      });
      if (last?.type === 'message' && last.role === 'user') return functionCall('call-1', { command: PROPOSED });
      if (last?.type === 'function_call_result' && last.output && typeof last.output === 'object' && 'text' in last.output) {
        const edited = editedArgumentsIn(String(last.output.text));
        if (edited) return functionCall('call-2', edited);
      }
      return { usage: new Usage(), output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] };
    }

    // eslint-disable-next-line require-yield
    async *getStreamedResponse(): AsyncIterable<never> {
      throw new Error('the tests run without streaming');
    }
  }

  it.each(DECISIONS)('%s', async (_name, decision, expectedRuns) => {
    const runs: string[] = [];
    const agent = new Agent({
      name: 'cleaner',
      model: new ScriptedModel(),
      tools: [
        agentsTool({
          name: 'run_command',
          description: 'Runs a shell command.',
          parameters: z.object({ command: z.string() }),
          needsApproval: true,
          execute: async ({ command }) => {
            runs.push(command);
            return 'ok';
          },
        }),
      ],
    });
    const answer = greenlightApprovals(client);
    const decided = reviewer('openai-agents:run_command', decision);
    let result = await run(agent, 'Clean the build directory.');
    while (result.interruptions.length > 0) {
      await answer(result);
      result = await run(agent, result.state);
    }
    await decided;
    expect(runs).toEqual(expectedRuns);
    expect(result.finalOutput).toBe('done');
    expect(await reviewCount('openai-agents:run_command')).toBe(1);
    expect(await schemaFiledWith('openai-agents:run_command')).toMatchObject(COMMAND_SCHEMA);
  });
});

describe('LangGraph: greenlightInterrupts', () => {
  /** Calls run_command, then after a refusal with edited arguments calls it with those, then stops. */
  function scriptedModel() {
    const followUp = (messages: BaseMessage[]) => {
      const edited = editedArgumentsIn(String(messages.at(-1)?.content ?? ''));
      return edited ? new AIMessage({ content: '', tool_calls: [{ name: 'run_command', args: edited, id: 'call-2' }] }) : new AIMessage('done');
    };
    return fakeModel()
      .respondWithTools([{ name: 'run_command', args: { command: PROPOSED }, id: 'call-1' }])
      .respond(followUp)
      .respond(followUp);
  }

  async function runAgent(allowedDecisions: Array<'approve' | 'edit' | 'reject'>, decision: Decision): Promise<string[]> {
    const runs: string[] = [];
    const runCommand = langchainTool(
      async ({ command }: { command: string }) => {
        runs.push(command);
        return 'ok';
      },
      { name: 'run_command', description: 'Runs a shell command.', schema: z.object({ command: z.string() }) },
    );
    const agent = createAgent({
      model: scriptedModel(),
      tools: [runCommand],
      checkpointer: new MemorySaver(),
      middleware: [humanInTheLoopMiddleware({ interruptOn: { run_command: { allowedDecisions, argsSchema: COMMAND_SCHEMA } } })],
    });
    const config = { configurable: { thread_id: `thread-${allowedDecisions.join('-')}` } };
    const answer = greenlightInterrupts(client);
    const decided = reviewer('langgraph:run_command', decision);
    let state = await agent.invoke({ messages: [{ role: 'user', content: 'Clean the build directory.' }] }, config);
    while (state.__interrupt__?.length) {
      state = await agent.invoke(new Command({ resume: await answer(state.__interrupt__[0].value as never) }), config);
    }
    await decided;
    expect(state.messages.at(-1)?.content).toBe('done');
    return runs;
  }

  it.each(DECISIONS)('%s', async (_name, decision, expectedRuns) => {
    expect(await runAgent(['approve', 'edit', 'reject'], decision)).toEqual(expectedRuns);
    expect(await reviewCount('langgraph:run_command')).toBe(1);
    expect(await schemaFiledWith('langgraph:run_command')).toEqual(COMMAND_SCHEMA);
  });

  it('turns a modification into a refusal with the edit where the action does not allow edits, and lets the edited call through', async () => {
    expect(await runAgent(['approve', 'reject'], { decision_type: 'modify', modified_action: EDITED })).toEqual([EDITED]);
    expect(await reviewCount('langgraph:run_command')).toBe(1);
  });
});

describe('reviews filed by the adapters', () => {
  it('are listed to MCP clients like any other agent\'s', async () => {
    const approval = greenlightToolApproval(client, { wait: 30 });
    const pending = approval({ toolCall: { toolName: 'sendEmail', toolCallId: 'call-9', input: { to: 'ops@example.com', body: 'Deploy done' } } });
    await pendingReviewOf(server.url, 'ai-sdk:sendEmail');

    const mcp = new McpClient({ name: 'adapter-tests', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    const listed = await mcp.callTool({ name: 'list_pending_reviews', arguments: { framework: 'ai-sdk' } });
    await mcp.close();
    expect(listed.structuredContent).toMatchObject({
      reviews: [expect.objectContaining({ task_type: 'ai-sdk:sendEmail', proposed_action: expect.stringContaining('ops@example.com') })],
    });
    const [filed] = (await call(server.url, 'GET', '/reviews?framework=ai-sdk')).body.reviews;
    expect(filed.metadata).toMatchObject({ tool_name: 'sendEmail', tool_call_id: 'call-9' });
    expect(JSON.parse(filed.proposed_action)).toEqual({ to: 'ops@example.com', body: 'Deploy done' });

    await reviewer('ai-sdk:sendEmail', { decision_type: 'approve' });
    expect(await pending).toMatchObject({ type: 'approved' });
  });
});
