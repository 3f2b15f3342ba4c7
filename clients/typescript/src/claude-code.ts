import { parseArgs } from 'node:util';
import { GreenlightClient } from './client.js';
import { GreenlightError } from './errors.js';
import { projectFiles, type ProjectFiles } from './project-files.js';
import { ToolCallReviewer, type ToolCallOutcome, type ToolInput } from './tool-review.js';

type PermissionDecision = 'allow' | 'deny' | 'ask';

interface PreToolUse {
  hook_event_name: 'PreToolUse';
  tool_name: string;
  tool_input: ToolInput;
  tool_use_id?: string;
  session_id?: string;
  cwd?: string;
  transcript_path?: string;
  permission_mode?: string;
}

interface HookAnswer {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse';
    permissionDecision: PermissionDecision;
    permissionDecisionReason: string;
    updatedInput?: ToolInput;
  };
}

export interface HookIo {
  stdin: AsyncIterable<string | Uint8Array>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

const USAGE = `Usage: greenlight hook claude-code [options]

A Claude Code PreToolUse hook: reads the hook's JSON on standard input, files a review in
Greenlight and waits for a person, then prints Claude Code's permission decision: allow,
deny with the reviewer's notes, or allow with the edited input (modify).

Options:
  --api-url <url>        the Greenlight API (default: $GREENLIGHT_API_URL, else http://127.0.0.1:8000);
                         the key, if any, comes from $GREENLIGHT_API_KEY
  --tools <regex>        tools that need review (default: all); others get no answer, so
                         Claude Code's own permission rules apply
  --skip <regex>         tools that never need review, even if --tools matches them
  --wait <seconds>       how long to wait for a decision (default: 50, inside the shortest
                         hook timeout Claude Code has had, 60 s; set the hook's timeout higher)
  --reach-within <s>     how long to keep trying to reach Greenlight before giving up (default: 5)
  --fallback <decision>  the answer when Greenlight cannot be reached or no one decides in
                         time: deny (default, fail closed) or ask (Claude Code asks in the terminal)
  --urgency <level>      low, medium, high or critical (default: the server's, medium)
  --attach <path>        a file to attach to every review (repeatable), by the same rules as
                         the files the tool call names
  --no-attachments       attach none of the files the tool call names (file_path, notebook_path)
  --attach-max-bytes <n> files larger than this are not attached (default: 1048576)
  -h, --help             show this help

The files a call names (file_path, notebook_path: the file an Edit or Write would change, as it
is now) are attached to its review, so the reviewer sees them. Only regular files inside the
project ($CLAUDE_PROJECT_DIR, else the session's cwd) are read, once every symbolic link is
followed; the review's metadata lists what was attached and what was not, and why.
`;

/** The one text argument a reviewer edits for Claude Code's tools; the others are shown as JSON. */
const EDITABLE_FIELDS: Record<string, string> = { Bash: 'command' };

const URGENCIES = ['low', 'medium', 'high', 'critical'] as const;

const HARD_STOP_MARGIN_SECONDS = 3;

/** The tool input fields Claude Code's tools name a file with (Read, Write, Edit, MultiEdit; NotebookEdit). */
const PATH_FIELDS = ['file_path', 'notebook_path'];

const DEFAULT_ATTACH_MAX_BYTES = 1024 * 1024;

class UsageError extends Error {}

interface HookOptions {
  apiUrl: string;
  apiKey: string | undefined;
  tools: RegExp;
  skip: RegExp | undefined;
  wait: number;
  reachWithin: number;
  fallback: 'deny' | 'ask';
  urgency: (typeof URGENCIES)[number] | undefined;
  /** Files attached to every review. */
  attach: string[];
  /** Attach the files the tool call names. */
  attachNamed: boolean;
  attachMaxBytes: number;
  /** Claude Code's project directory (`$CLAUDE_PROJECT_DIR`), when it says. */
  projectDir: string | undefined;
}

function wholeRegex(source: string, option: string): RegExp {
  try {
    return new RegExp(`^(?:${source})$`);
  } catch (error) {
    throw new UsageError(`${option}: not a regular expression: ${(error as Error).message}`);
  }
}

function seconds(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > 86_400) throw new UsageError(`${option}: must be a whole number of seconds from 1 to 86400`);
  return value;
}

function optionsFrom(args: string[], env: HookIo['env']): HookOptions | 'help' {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      'api-url': { type: 'string' },
      tools: { type: 'string' },
      skip: { type: 'string' },
      wait: { type: 'string' },
      'reach-within': { type: 'string' },
      fallback: { type: 'string' },
      urgency: { type: 'string' },
      attach: { type: 'string', multiple: true },
      'no-attachments': { type: 'boolean' },
      'attach-max-bytes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const fallback = values.fallback ?? 'deny';
  if (fallback !== 'deny' && fallback !== 'ask') throw new UsageError('--fallback: must be deny or ask');
  const urgency = values.urgency as HookOptions['urgency'];
  if (urgency !== undefined && !URGENCIES.includes(urgency)) throw new UsageError(`--urgency: must be one of ${URGENCIES.join(', ')}`);
  return {
    apiUrl: values['api-url'] ?? env.GREENLIGHT_API_URL ?? 'http://127.0.0.1:8000',
    apiKey: env.GREENLIGHT_API_KEY || undefined,
    tools: wholeRegex(values.tools ?? '.*', '--tools'),
    skip: values.skip === undefined ? undefined : wholeRegex(values.skip, '--skip'),
    wait: values.wait === undefined ? 50 : seconds(values.wait, '--wait'),
    reachWithin: values['reach-within'] === undefined ? 5 : seconds(values['reach-within'], '--reach-within'),
    fallback,
    urgency,
    attach: values.attach ?? [],
    attachNamed: !values['no-attachments'],
    attachMaxBytes: values['attach-max-bytes'] === undefined ? DEFAULT_ATTACH_MAX_BYTES : byteCount(values['attach-max-bytes'], '--attach-max-bytes'),
    projectDir: env.CLAUDE_PROJECT_DIR || undefined,
  };
}

function byteCount(text: string, option: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || !Number.isSafeInteger(value)) throw new UsageError(`${option}: must be a whole number of bytes, at least 1`);
  return value;
}

/** The files of a call to attach: those `--attach` names, and those the tool input names. */
async function filesFor(event: PreToolUse, options: HookOptions): Promise<ProjectFiles | undefined> {
  const named = options.attachNamed ? PATH_FIELDS.map((field) => event.tool_input[field]).filter((value): value is string => typeof value === 'string' && value !== '') : [];
  const paths = [...options.attach, ...named];
  const projectDir = options.projectDir ?? event.cwd;
  if (paths.length === 0) return undefined;
  if (!projectDir) return { attachments: [], attached: [], skipped: paths.map((file) => ({ path: file, reason: 'no project directory to read it from' })) };
  return projectFiles(paths, { projectDir, cwd: event.cwd ?? projectDir, maxBytes: options.attachMaxBytes });
}

async function readAll(stdin: HookIo['stdin']): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stdin) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

function parseHookInput(text: string): PreToolUse {
  let parsed: Partial<PreToolUse>;
  try {
    parsed = JSON.parse(text) as Partial<PreToolUse>;
  } catch {
    throw new UsageError('standard input is not JSON; Claude Code sends the hook its event as JSON');
  }
  if (parsed.hook_event_name !== 'PreToolUse') throw new UsageError(`this hook answers PreToolUse events, not ${String(parsed.hook_event_name)}`);
  if (typeof parsed.tool_name !== 'string' || typeof parsed.tool_input !== 'object' || parsed.tool_input === null) {
    throw new UsageError('the PreToolUse event has no tool_name or tool_input');
  }
  return parsed as PreToolUse;
}

function answer(permissionDecision: PermissionDecision, permissionDecisionReason: string, updatedInput?: ToolInput): HookAnswer {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason, ...(updatedInput ? { updatedInput } : {}) } };
}

function answerFor(outcome: ToolCallOutcome, fallback: HookOptions['fallback']): HookAnswer {
  if (outcome.outcome === 'approve') return answer('allow', outcome.message);
  if (outcome.outcome === 'edit') return answer('allow', outcome.message, outcome.input);
  const undecided = outcome.review.status === 'pending';
  return answer(undecided ? fallback : 'deny', outcome.message);
}

async function decide(event: PreToolUse, options: HookOptions): Promise<HookAnswer> {
  const unreachable = new AbortController();
  const started = Date.now();
  // Claude Code lets a call through when a hook outlives its timeout: whatever the network
  // does, the hook answers (with the fallback) a few seconds after --wait.
  const hardStop = setTimeout(() => unreachable.abort(new Error(`no answer within ${options.wait} s`)), (options.wait + HARD_STOP_MARGIN_SECONDS) * 1000);
  const client = new GreenlightClient({ baseUrl: options.apiUrl, apiKey: options.apiKey });
  const files = await filesFor(event, options);
  const reviewer = new ToolCallReviewer(client, {
    framework: 'claude-code',
    editableFields: EDITABLE_FIELDS,
    wait: options.wait,
    urgency: options.urgency,
    signal: unreachable.signal,
    // A server that never named the review is given up on early; one that did may be restarting.
    onRetry: ({ reason, reviewId }) => {
      if (reason === 'connection' && reviewId === undefined && Date.now() - started >= options.reachWithin * 1000) unreachable.abort(new Error('no answer'));
    },
    metadata: {
      session_id: event.session_id,
      cwd: event.cwd,
      transcript_path: event.transcript_path,
      permission_mode: event.permission_mode,
      // What the reviewer has of the files the call names, and what was left out and why.
      ...(files ? { attached_files: files.attached, files_not_attached: files.skipped } : {}),
    },
  });
  try {
    // Claude Code's Bash calls say what the command is for; that is the agent's reasoning.
    const reasoning = typeof event.tool_input.description === 'string' ? event.tool_input.description : undefined;
    const outcome = await reviewer.review({ toolName: event.tool_name, input: event.tool_input, toolCallId: event.tool_use_id, reasoning, attachments: files?.attachments });
    return answerFor(outcome, options.fallback);
  } catch (error) {
    if (error instanceof GreenlightError && error.status < 500) {
      return answer('deny', `Greenlight refused the review: ${error.problem.detail ?? error.message}`);
    }
    return answer(options.fallback, `Greenlight at ${options.apiUrl} could not be reached, so ${event.tool_name} was not reviewed: ${(error as Error).message}`);
  } finally {
    clearTimeout(hardStop);
  }
}

/**
 * `greenlight hook claude-code`: answers one PreToolUse event. Exit code 0 with the decision
 * as JSON; 2 (which Claude Code takes as "block the call") for arguments or input it cannot
 * use, so a mistake in the set-up can never let a call through unreviewed.
 */
export async function runClaudeCodeHook(args: string[], io: HookIo): Promise<number> {
  let options: HookOptions | 'help';
  let event: PreToolUse;
  try {
    options = optionsFrom(args, io.env);
    if (options === 'help') {
      io.stdout.write(USAGE);
      return 0;
    }
    event = parseHookInput(await readAll(io.stdin));
  } catch (error) {
    io.stderr.write(`greenlight hook claude-code: ${(error as Error).message}\n`);
    return 2;
  }
  if (!options.tools.test(event.tool_name) || options.skip?.test(event.tool_name)) return 0;
  io.stdout.write(`${JSON.stringify(await decide(event, options))}\n`);
  return 0;
}
