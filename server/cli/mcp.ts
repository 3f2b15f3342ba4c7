import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfig } from '../config/load';
import { apiUrlOf, type Config } from '../config/settings';
import { createLogger, type Logger } from '../logging';
import { apiGateway, greenlightAnswers } from '../mcp/api-gateway';
import { ANONYMOUS_LOCAL } from '../domain/shared/principal';
import type { ReviewGateway } from '../mcp/gateway';
import { createReviewTools } from '../mcp/tools';
import { startServer } from '../app/api-server';
import { PortInUseError } from '../app/listen';
import { CliError } from './errors';
import { runUntilStopped, type Stoppable, stopRequested } from './run-until-stopped';

export interface McpOptions {
  config?: string;
  apiUrl?: string;
  /** Longest a call without a progress token is held, for clients whose timeout is not the SDKs' 60 s. */
  answerWithin?: number;
}

/** Long-polls of the remote API stay well inside common proxy idle limits. */
const LONG_POLL_SECONDS = 55;

function remoteGateway(config: Config, apiUrl: string): ReviewGateway {
  return apiGateway({
    apiUrl,
    apiKey: config.api_key || undefined,
    longPollSeconds: Math.min(LONG_POLL_SECONDS, config.blocking_timeout_seconds),
  });
}

/**
 * The running API when one answers, so reviews show up live in its dashboard and decisions
 * arrive by push. Otherwise, only when no API was named (`api_url` and `--api-url` empty), one
 * started in this process on this machine's `api_port` and the configured database, rather
 * than leaving the agent without review. An API that was named and does not answer is an
 * error: standing in for it on its port would hide the mistake and split the reviews between
 * two databases.
 */
async function connect(config: Config, log: Logger): Promise<{ gateway: ReviewGateway; running: Stoppable[] }> {
  const apiUrl = apiUrlOf(config);
  if (await greenlightAnswers(apiUrl)) {
    log.info(`using the Greenlight API at ${apiUrl}`);
    return { gateway: remoteGateway(config, apiUrl), running: [] };
  }
  if (config.api_url) {
    throw new CliError(
      `no Greenlight API answers at ${apiUrl} (--api-url / api_url); start it there (greenlight start), or leave api_url empty to let greenlight mcp start one on this machine`,
      1,
    );
  }
  try {
    const server = await startServer(config, { log });
    log.warn(
      `no Greenlight API was running, so this process started one on ${server.url} (database ${server.databaseLocation}); ` +
        'it stops when this MCP session ends. Reviewers can open the dashboard with: greenlight start --dashboard-only',
    );
    return { gateway: server.gatewayFor(ANONYMOUS_LOCAL), running: [server] };
  } catch (error) {
    // Another `greenlight mcp` or `greenlight start` may have taken the port a moment ago.
    if (error instanceof PortInUseError && (await greenlightAnswers(apiUrl))) {
      log.info(`using the Greenlight API at ${apiUrl}`);
      return { gateway: remoteGateway(config, apiUrl), running: [] };
    }
    if (error instanceof PortInUseError) {
      throw new CliError(`${error.message} by something that is not Greenlight; set api_port to where Greenlight should run`, 1);
    }
    throw error;
  }
}

/**
 * `greenlight mcp`: Greenlight's tools for an MCP client over stdio. Standard output carries
 * protocol messages only; everything else, logs included, goes to standard error.
 */
export async function runMcp(options: McpOptions): Promise<void> {
  const { config } = loadConfig({ file: options.config, flags: { api_url: options.apiUrl } });
  const log = createLogger({ stream: process.stderr });
  // The client ending the session closes our stdin; the tools go first, then the API they use.
  const stop = stopRequested((stopNow) => process.stdin.once('end', () => stopNow('the MCP client closed the session')));
  const { gateway, running } = await connect(config, log);

  const tools = createReviewTools(gateway, { defaultWaitSeconds: config.blocking_timeout_seconds, answerWithinSeconds: options.answerWithin });
  await tools.connect(new StdioServerTransport());
  log.info('MCP server ready on stdio');

  await runUntilStopped([tools, ...running], log, stop);
}
