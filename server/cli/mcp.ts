import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfig } from '../config/load';
import { apiUrlOf, type Config, isLoopback } from '../config/settings';
import { createLogger, type Logger } from '../logging';
import { apiGateway, greenlightAnswers } from '../mcp/api-gateway';
import { localGateway, type ReviewGateway } from '../mcp/gateway';
import { createReviewTools } from '../mcp/tools';
import { PortInUseError, startServer } from '../runtime';
import { CliError } from './errors';
import { runUntilStopped, type Stoppable } from './run-until-stopped';

export interface McpOptions {
  config?: string;
  apiUrl?: string;
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
 * arrive by push. Otherwise (only for an API on this machine) one started in this process on
 * the configured database, rather than leaving the agent without review.
 */
async function connect(config: Config, log: Logger): Promise<{ gateway: ReviewGateway; running: Stoppable[] }> {
  const apiUrl = apiUrlOf(config);
  if (await greenlightAnswers(apiUrl)) {
    log.info(`using the Greenlight API at ${apiUrl}`);
    return { gateway: remoteGateway(config, apiUrl), running: [] };
  }
  if (!isLoopback(new URL(apiUrl).hostname)) {
    throw new CliError(`no Greenlight API answers at ${apiUrl} (api_url); start it there, or leave api_url empty to use this machine's`, 1);
  }
  try {
    // Where the agent's reviews are expected: the port of a local api_url, else api_port.
    const port = config.api_url ? Number(new URL(apiUrl).port || 80) : config.api_port;
    const server = await startServer({ ...config, api_port: port }, { log });
    log.warn(
      `no Greenlight API was running, so this process started one on ${server.url} (database ${server.services.db.file}); ` +
        'it stops when this MCP session ends. Reviewers can open the dashboard with: greenlight start --dashboard-only',
    );
    return { gateway: localGateway(server.services), running: [server] };
  } catch (error) {
    // Another `greenlight mcp` or `greenlight start` may have taken the port a moment ago.
    if (error instanceof PortInUseError && (await greenlightAnswers(apiUrl))) {
      log.info(`using the Greenlight API at ${apiUrl}`);
      return { gateway: remoteGateway(config, apiUrl), running: [] };
    }
    if (error instanceof PortInUseError) {
      throw new CliError(`${error.message} by something that is not Greenlight; set api_port (or api_url) to where Greenlight should run`, 1);
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
  const { gateway, running } = await connect(config, log);

  const tools = createReviewTools(gateway, { defaultWaitSeconds: config.blocking_timeout_seconds });
  await tools.connect(new StdioServerTransport());
  log.info('MCP server ready on stdio');

  // The client ending the session closes our stdin; the tools go first, then the API they use.
  await runUntilStopped([tools, ...running], log, (stop) => process.stdin.once('end', () => stop('the MCP client closed the session')));
}
