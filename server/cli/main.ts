import { Command, InvalidArgumentError, Option } from 'commander';
import { CONFIG_FILE_NAME } from '../config/load';
import { REVIEW_STATUSES } from '../domain/reviews/records';
import { ConfigError, EDITIONS } from '../config/settings';
import { packageVersion } from '../package-info';
import { CliError } from './errors';
import type { InitOptions } from './init';
import type { McpOptions } from './mcp';
import { holdYoungGeneration } from './heap';

function integerText(value: string): string {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return value;
}

function workerCount(value: string): number {
  const count = Number(integerText(value));
  if (count < 1 || count > 64) throw new InvalidArgumentError('must be from 1 to 64');
  return count;
}

function limitNumber(value: string): number {
  const limit = Number(integerText(value));
  if (limit < 1 || limit > 1000) throw new InvalidArgumentError('must be from 1 to 1000');
  return limit;
}

function waitSeconds(value: string): number {
  const seconds = Number(integerText(value));
  if (seconds < 1 || seconds > 86_400) throw new InvalidArgumentError('must be from 1 to 86400');
  return seconds;
}

const configOption = (): Option => new Option('--config <file>', `configuration file (default: ./${CONFIG_FILE_NAME} when present)`);

function buildProgram(): Command {
  const program = new Command('greenlight')
    .description('Human review for AI agents: agents propose actions, people approve, reject or modify them.')
    .version(packageVersion)
    .showHelpAfterError()
    // Lets `hook` hand its options to the hook untouched.
    .enablePositionalOptions()
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('init')
    .description('write a commented configuration file with every setting at its default')
    .option('--path <file>', 'where to write it', CONFIG_FILE_NAME)
    .option('--force', 'overwrite an existing file')
    .addOption(new Option('--edition <edition>', 'the edition the file configures').choices(EDITIONS).default('self-hosted'))
    .action(async (options: InitOptions) => (await import('./init.js')).runInit(options, process.stdout));

  program
    .command('start')
    .description('start the API (port 8000) and the reviewer dashboard (port 8501), both bound to 127.0.0.1 by default')
    .addOption(configOption())
    .option('--port <n>', 'API port (overrides api_port)', integerText)
    .option('--host <address>', 'interface the API binds to (overrides api_host)')
    .option('--dashboard-port <n>', 'dashboard port (overrides dashboard_port)', integerText)
    .option('--api-only', 'run only the API')
    .option('--dashboard-only', 'run only the dashboard, forwarding /api to api_url')
    .option('--allow-unauthenticated-network', 'listen on a non-loopback --host with enable_auth false (anyone on the network could decide reviews)')
    .option('--workers <n>', 'run the API in n processes sharing the port (PostgreSQL only)', workerCount)
    // Loaded on use: the server's modules take a second to load, which `--help` need not pay.
    .action(async (options) => {
      holdYoungGeneration();
      return (await import('./start.js')).runStart(options);
    });

  program
    .command('mcp')
    .description('run the MCP server on stdio for MCP clients (Claude Desktop, IDE agents); uses the running API, or starts one in-process')
    .addOption(configOption())
    .option('--api-url <url>', 'the Greenlight API to use (overrides api_url; default: this machine\'s, from api_host and api_port)')
    .option('--answer-within <seconds>', 'answer a waiting call that came without a progress token within this many seconds, "pending" if no one has decided yet (default: a little under the 60 s request timeout of common MCP clients)', waitSeconds)
    .action(async (options: McpOptions) => (await import('./mcp.js')).runMcp(options));

  program
    .command('reload')
    .description('check the edited configuration, then make the running API load its routing policy (same as sending it SIGHUP)')
    .addOption(configOption())
    .action(async (options: { config?: string }) => (await import('./policy-reload.js')).runReload(options, process.stdout));

  program
    .command('status')
    .description('check the configuration, the database and the running API; exit code 0 only when all are healthy')
    .addOption(configOption())
    .action(async (options: { config?: string }) => (await import('./status.js')).runStatus(options, process.stdout));

  program
    .command('org')
    .description('organizations of the hosted edition')
    .command('create')
    .description('create an organization in the configured database and print its first admin API key (shown once), and with --admin-email the invitation link of its first admin')
    .addOption(configOption())
    .requiredOption('--name <name>', 'the organization\'s name')
    .option('--admin-email <email>', 'also add its first person, an admin, and print their invitation link (to set a password and sign in)')
    .action(async (options: { config?: string; name: string; adminEmail?: string }) => (await import('./org.js')).runOrgCreate(options, process.stdout));

  const keys = program.command('keys').description('the keys that sign decision receipts (public halves at /.well-known/jwks.json)');
  keys
    .command('rotate')
    .description('make a new receipt signing key current; earlier public keys stay listed, so receipts they signed still verify')
    .addOption(configOption())
    .action(async (options: { config?: string }) => (await import('./keys.js')).runKeysRotate(options, process.stdout));
  keys
    .command('list')
    .description('list the receipt signing keys: kid, whether current, when made and retired')
    .addOption(configOption())
    .action(async (options: { config?: string }) => (await import('./keys.js')).runKeysList(options, process.stdout));

  program
    .command('hook')
    .description('answer an agent\'s approval hook with a Greenlight review: `greenlight hook claude-code --help`')
    .argument('<agent>', 'the agent whose hook this is: claude-code')
    .argument('[options...]', 'the hook\'s options (see `greenlight hook claude-code --help`)')
    .helpOption(false)
    .allowUnknownOption()
    .passThroughOptions()
    // Commander's own usage errors exit with 1, which would let the agent's call through.
    .exitOverride((error) => {
      process.exit(error.exitCode === 0 ? 0 : BLOCK_THE_CALL);
    })
    .action(async (agent: string, options: string[]) => {
      process.exitCode = await runHook(agent, options);
    });

  program
    .command('slack')
    .description('reviews in Slack')
    .command('manifest')
    .description('print the Slack app manifest to paste into api.slack.com/apps → Create New App → From a manifest (Socket Mode: no public URL needed)')
    .option('--name <name>', 'the app\'s and its bot\'s name in Slack', 'Greenlight')
    .option('--public-url <url>', 'instead of Socket Mode, where Slack reaches this API over HTTPS (its interactions and events endpoints)')
    .action(async (options: { name: string; publicUrl?: string }) => (await import('./slack.js')).runSlackManifest(options, process.stdout));

  program
    .command('logs')
    .description('show the most recent reviews as a table')
    .addOption(configOption())
    .option('--limit <n>', 'how many reviews (1-1000)', limitNumber, 20)
    .addOption(new Option('--status-filter <status>', 'only reviews with this status').choices(REVIEW_STATUSES))
    .action(async (options) => (await import('./logs.js')).runLogs(options, process.stdout));

  return program;
}

/** The part of the client package's hook module this command calls. */
interface HookModule {
  runClaudeCodeHook(args: string[], io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): Promise<number>;
}

/** Claude Code blocks a tool call on exit code 2 and lets it through on any other failure. */
const BLOCK_THE_CALL = 2;

async function runHook(agent: string, args: string[]): Promise<number> {
  try {
    if (agent !== 'claude-code') throw new Error(`unknown agent "${agent}"; hooks exist for: claude-code`);
    // The hook lives in the client package (ESM, built after the server), so it is loaded by
    // name at run time rather than compiled in.
    const specifier: string = '@greenlight/client/claude-code';
    const hooks = (await import(specifier)) as HookModule;
    return await hooks.runClaudeCodeHook(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
  } catch (error) {
    // A hook that cannot run must not let the call through unreviewed.
    process.stderr.write(`greenlight hook: ${error instanceof Error ? error.message : String(error)}\n`);
    return BLOCK_THE_CALL;
  }
}

export async function main(argv: string[]): Promise<void> {
  // `greenlight logs | head`: a reader that stops early ends the command quietly, as it would
  // any other command-line tool, rather than with a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`greenlight: configuration error: ${error.message}\n`);
      process.exitCode = 2;
    } else if (error instanceof CliError) {
      process.stderr.write(`greenlight: ${error.message}\n`);
      process.exitCode = error.exitCode;
    } else {
      process.stderr.write(`greenlight: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  }
}
