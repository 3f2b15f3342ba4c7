import { spawn } from 'node:child_process';
import { CLI } from './cli';

export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `greenlight hook claude-code <args>` as Claude Code runs it: the event on standard input,
 * and `env` (e.g. `CLAUDE_PROJECT_DIR`) as Claude Code sets it; none of the test runner's own.
 */
export function runHook(args: string[], stdin: string, extraEnv: Record<string, string> = {}): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith('GREENLIGHT_') || key.startsWith('CLAUDE_')) delete env[key];
    Object.assign(env, extraEnv);
    const child = spawn(process.execPath, [CLI, 'hook', 'claude-code', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** A PreToolUse event as Claude Code sends it, in the session's working directory `cwd`. */
export function preToolUse(toolName: string, toolInput: Record<string, unknown>, cwd = '/home/dev/shop'): string {
  return JSON.stringify({
    session_id: 'session-42',
    transcript_path: '/home/dev/.claude/projects/shop/session-42.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: 'toolu_01',
  });
}
