// A tool that runs only once a person approves it in Greenlight. The model is the AI SDK's
// gateway string; any provider's model works the same way.
import { exec } from 'node:child_process';
import { promisify } from 'node:util';
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import { GreenlightClient } from '@greenlight/client';
import { greenlightToolApproval } from '@greenlight/client/ai-sdk';

const greenlight = new GreenlightClient({ baseUrl: 'http://127.0.0.1:8000' });

const runCommand = tool({
  description: 'Runs a shell command and returns its output.',
  inputSchema: z.object({ command: z.string() }),
  execute: async ({ command }) => (await promisify(exec)(command)).stdout,
});

const result = await generateText({
  model: 'openai/gpt-4.1',
  tools: { runCommand },
  stopWhen: isStepCount(5),
  prompt: 'Free some disk space in ./build.',
  toolApproval: greenlightToolApproval(greenlight, { tools: ['runCommand'] }),
});
console.log(result.text);
