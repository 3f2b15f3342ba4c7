// An OpenAI Agents SDK run whose approvals come from Greenlight (needs OPENAI_API_KEY).
import { exec } from 'node:child_process';
import { promisify } from 'node:util';
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';
import { GreenlightClient } from '@greenlight/client';
import { greenlightApprovals } from '@greenlight/client/openai-agents';

const greenlight = new GreenlightClient({ baseUrl: 'http://127.0.0.1:8000' });

const agent = new Agent({
  name: 'Janitor',
  instructions: 'You keep the build directory small.',
  model: 'gpt-4.1',
  tools: [
    tool({
      name: 'run_command',
      description: 'Runs a shell command and returns its output.',
      parameters: z.object({ command: z.string() }),
      needsApproval: true,
      execute: async ({ command }) => (await promisify(exec)(command)).stdout,
    }),
  ],
});

const answer = greenlightApprovals(greenlight);
let result = await run(agent, 'Free some disk space in ./build.');
while (result.interruptions.length > 0) {
  await answer(result);
  result = await run(agent, result.state);
}
console.log(result.finalOutput);
