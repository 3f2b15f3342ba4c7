// A LangChain agent (on LangGraph) whose human-in-the-loop interrupts are answered in
// Greenlight. `openai:gpt-4.1` needs @langchain/openai and OPENAI_API_KEY.
import { exec } from 'node:child_process';
import { promisify } from 'node:util';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent, humanInTheLoopMiddleware, tool, type HITLRequest } from 'langchain';
import { z } from 'zod';
import { GreenlightClient } from '@greenlight/client';
import { greenlightInterrupts } from '@greenlight/client/langgraph';

const greenlight = new GreenlightClient({ baseUrl: 'http://127.0.0.1:8000' });

const runCommand = tool(async ({ command }) => (await promisify(exec)(command)).stdout, {
  name: 'run_command',
  description: 'Runs a shell command and returns its output.',
  schema: z.object({ command: z.string() }),
});

const agent = createAgent({
  model: 'openai:gpt-4.1',
  tools: [runCommand],
  checkpointer: new MemorySaver(),
  middleware: [humanInTheLoopMiddleware({ interruptOn: { run_command: true } })],
});

const config = { configurable: { thread_id: 'cleanup-1' } };
const answer = greenlightInterrupts(greenlight);
let state = await agent.invoke({ messages: [{ role: 'user', content: 'Free some disk space in ./build.' }] }, config);
while (state.__interrupt__?.length) {
  state = await agent.invoke(new Command({ resume: await answer(state.__interrupt__[0].value as HITLRequest) }), config);
}
console.log(state.messages.at(-1)?.content);
