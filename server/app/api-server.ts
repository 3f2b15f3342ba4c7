import type { Config } from '../config/settings';
import type { Policy } from '../domain/routing/review-policy';
import type { Principal } from '../domain/shared/principal';
import { createApp } from '../http/app';
import { type ConnectionLimits, connectionLimitsFor } from '../http/connections';
import { EventStreams } from '../http/event-stream';
import { httpServerFor } from '../http/express-server';
import { exposureOf, warnIfOpenWithoutKey } from '../http/exposure';
import { type Logger, silentLogger } from '../logging';
import { localGateway, type ReviewGateway } from '../mcp/gateway';
import { McpHttpSessions, type McpSessionOptions } from '../mcp/http-sessions';
import type { ReviewToolsOptions } from '../mcp/tools';
import { httpEditionOf } from './edition';
import { listen } from './listen';
import { openServices, type ServiceOptions, type Services } from './services';
import { hostedSlackEvents } from './slack';

/** The API as its host (the CLI, the desktop app, a test) holds it. */
export interface RunningServer {
  /** e.g. `http://127.0.0.1:8000` */
  url: string;
  port: number;
  /** Where the data is, for the log (a PostgreSQL URL without its password). */
  databaseLocation: string;
  /** Puts a reloaded policy in force for new reviews and the next expiries; waiting agents are untouched. */
  replacePolicy(policy: Policy): void;
  /** The MCP tools' way into this API's use cases, acting for `principal` (`greenlight mcp` started it). */
  gatewayFor(principal: Principal): ReviewGateway;
  /** Stops accepting, answers every waiting client, then closes the database. */
  close(): Promise<void>;
}

export interface StartOptions extends ServiceOptions {
  log?: Logger;
  validateResponses?: boolean;
  /**
   * How long requests under way get on shutdown before connections whose request has not fully
   * arrived are closed; requests that have are still answered.
   */
  drainMs?: number;
  /** Replaces the connection limits derived from `max_waiting_requests` and the open-file limit. */
  connectionLimits?: Partial<ConnectionLimits>;
  heartbeatMs?: number;
  /** How the MCP tools at /mcp wait (progress interval, the hold without a progress token, task polling). */
  mcpTools?: Omit<ReviewToolsOptions, 'defaultWaitSeconds'>;
  /** Limits of the MCP sessions at /mcp. */
  mcpSessionLimits?: McpSessionOptions;
}

/** A started API with the parts only `app/` may reach: its services and its live connections. */
export interface LaunchedApi {
  running: RunningServer;
  services: Services;
  eventStreams: EventStreams;
  mcpSessions: McpHttpSessions;
}

/** The HTTP API on `api_host:api_port`, in steps: who may reach it, its services, its live connections, its routes, the port. */
export async function launchApi(config: Config, options: StartOptions = {}): Promise<LaunchedApi> {
  const exposure = exposureOf(config, 'api_host');
  const log = options.log ?? silentLogger;
  const services = await openServices(config, log, options);
  const { eventStreams, mcpSessions } = liveConnections(config, services, options);
  const app = createApp({
    reviews: services.reviews,
    feedback: services.feedback,
    attachments: services.attachments,
    files: services.files,
    statistics: services.statistics,
    receiptKeys: services.receiptKeys,
    eventStreams,
    mcpSessions,
    edition: httpEditionOf(config, services.hosted, { log, clock: options.clock }),
    exposure,
    trustedProxies: config.trusted_proxies,
    rateLimitPerMinute: config.rate_limit_per_minute,
    pingDatabase: services.db.ping,
    disk: services.disk,
    clock: options.clock,
    blockingTimeoutSeconds: config.blocking_timeout_seconds,
    log,
    validateResponses: options.validateResponses,
    slack: {
      signingSecret: config.slack_signing_secret,
      inbound: services.slackInbound,
      onEvent: services.slack?.onEvent ?? hostedSlackEvents(services.hosted.chatInstallations),
      log,
      clock: options.clock,
    },
  });
  const limits = {
    ...connectionLimitsFor({ maxWaitingRequests: config.max_waiting_requests, outgoingSockets: services.background.outgoingSockets }),
    ...options.connectionLimits,
  };
  const listening = await listen(httpServerFor(app, limits), config.api_host, config.api_port, log).catch(async (error: unknown) => {
    await services.close();
    throw error;
  });
  warnIfOpenWithoutKey(exposure, log, 'the API', listening, 'read, file and decide reviews, read their attachments and open MCP sessions');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await listening.close(options.drainMs ?? 5_000, () => {
        services.waiters.shutdown();
        eventStreams.closeAll();
        void mcpSessions.closeAll();
      });
      await services.close();
    })();
    return closing;
  };
  const running: RunningServer = {
    url: listening.url,
    port: listening.port,
    databaseLocation: services.db.location,
    replacePolicy: services.replacePolicy,
    gatewayFor: (principal) => localGateway(services, principal),
    close,
  };
  return { running, services, eventStreams, mcpSessions };
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  return (await launchApi(config, options)).running;
}

/** Live event streams and MCP sessions; in this process or another, a revoked credential ends what was opened with it. */
function liveConnections(config: Config, services: Services, options: StartOptions): { eventStreams: EventStreams; mcpSessions: McpHttpSessions } {
  const eventStreams = new EventStreams(services.feed, services.outbox, { heartbeatMs: options.heartbeatMs });
  // The MCP SDK loads with the first /mcp session, not at start (see McpHttpSessions.open).
  const mcpSessions = new McpHttpSessions(
    async (principal) =>
      (await import('../mcp/tools.js')).createReviewTools(localGateway(services, principal), {
        ...options.mcpTools,
        defaultWaitSeconds: config.blocking_timeout_seconds,
      }),
    options.mcpSessionLimits,
  );
  services.feed.onRevocation(({ principal_id }) => {
    eventStreams.endStreamsOf(principal_id);
    void mcpSessions.closeSessionsOf(principal_id);
  });
  return { eventStreams, mcpSessions };
}
