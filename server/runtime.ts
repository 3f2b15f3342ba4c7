import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, isLoopback } from './config/settings';
import { sqliteFile } from './config/load';
import { type Database, openDatabase } from './db/connection';
import { migrate } from './db/migrate';
import { defineModels } from './db/models';
import path from 'node:path';
import { AttachmentFiles } from './db/attachment-files';
import { AttachmentStore } from './db/attachment-store';
import { FeedbackStore } from './db/feedback-store';
import { ReviewStore } from './db/review-store';
import { queryStatistics } from './db/statistics-query';
import { AttachmentService } from './domain/attachments';
import { EventBus } from './domain/events';
import { FeedbackService } from './domain/feedback';
import type { Statistics } from './domain/records';
import { ReviewService } from './domain/reviews';
import { DecisionWaiters } from './domain/waiters';
import { ReviewExpiry } from './domain/expiry';
import type { Policy } from './domain/policy';
import { createApp } from './http/app';
import { httpServerFor } from './http/express-server';
import { EventStreams } from './http/event-stream';
import { createDashboardApp } from './dashboard/app';
import { type Logger, silentLogger } from './logging';
import { localGateway } from './mcp/gateway';
import { McpHttpSessions } from './mcp/http-sessions';

/** Everything behind the HTTP layer, wired to one database. */
export interface Services {
  db: Database;
  bus: EventBus;
  waiters: DecisionWaiters;
  reviews: ReviewService;
  feedback: FeedbackService;
  attachments: AttachmentService;
  statistics: (organizationId?: number) => Promise<Statistics>;
  /** The review policy in force. */
  policy(): Policy;
  /** Puts a reloaded policy in force for new reviews and the next expiries; waiting agents are untouched. */
  replacePolicy(policy: Policy): void;
  /** Stops background work (the expiry timer) and closes the database. */
  close(): Promise<void>;
}

export async function openServices(config: Config, log: Logger, clock: () => number = Date.now): Promise<Services> {
  const db = openDatabase(sqliteFile(config));
  try {
    const applied = await migrate(db.sequelize);
    if (applied.length > 0) log.info('database migrated', { file: db.file, applied });
  } catch (error) {
    await db.close();
    throw error;
  }
  const bus = new EventBus((type, error) => log.error('event listener failed', { event: type, error: String(error) }));
  const waiters = new DecisionWaiters(bus);
  const models = defineModels(db.sequelize);
  const reviewStore = new ReviewStore(db, models);
  const reviewExists = (id: number) => reviewStore.exists(id);
  let policy = config.routing;
  const currentPolicy = (): Policy => policy;
  const reviews = new ReviewService({ store: reviewStore, bus, waiters, policy: currentPolicy, maxWaiting: config.max_waiting_requests, clock });
  const files = new AttachmentFiles(path.join(config.data_dir, 'attachments'));
  const abandoned = await files.sweepIncoming();
  if (abandoned > 0) log.info('removed unfinished uploads', { count: abandoned });
  const attachmentStore = new AttachmentStore(db, models);
  const kept = await attachmentStore.storageKeys();
  const unreferenced = await files.sweepUnreferenced((storageKey) => kept.has(storageKey));
  if (unreferenced > 0) log.info('removed files of uploads that never committed', { count: unreferenced });
  const limits = { maxBytes: config.max_attachment_bytes, maxPerReview: config.max_attachments_per_review };
  const attachments = new AttachmentService(attachmentStore, files, bus, limits, reviewExists, clock);
  const feedback = new FeedbackService(new FeedbackStore(db, models), bus, reviewExists, clock);
  const statistics = (organizationId?: number) => queryStatistics(db.sequelize, organizationId, clock());
  const expiry = new ReviewExpiry({ store: reviewStore, reviews, bus, policy: currentPolicy, log, clock });
  await expiry.start();
  return {
    db,
    bus,
    waiters,
    reviews,
    feedback,
    attachments,
    statistics,
    policy: currentPolicy,
    replacePolicy: (next) => {
      policy = next;
    },
    close: async () => {
      expiry.stop();
      await db.close();
    },
  };
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:8000` */
  url: string;
  port: number;
  services: Services;
  eventStreams: EventStreams;
  mcpSessions: McpHttpSessions;
  /** Stops accepting, answers every waiting client, then closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  validateResponses?: boolean;
  /** How long in-flight requests get to finish on shutdown before their sockets are cut. */
  drainMs?: number;
  heartbeatMs?: number;
  /** How often a waiting MCP tool call reports progress. */
  mcpProgressIntervalMs?: number;
  /** The service's notion of now (tests set it to make durations exact). */
  clock?: () => number;
}

export class PortInUseError extends Error {
  constructor(readonly host: string, readonly port: number) {
    super(`port ${port} on ${host} is already in use`);
    this.name = 'PortInUseError';
  }
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? silentLogger;
  const services = await openServices(config, log, options.clock);
  const eventStreams = new EventStreams(services.bus, { heartbeatMs: options.heartbeatMs });
  const gateway = localGateway(services);
  // The MCP SDK loads with the first /mcp session, not at start (see McpHttpSessions.open).
  const mcpSessions = new McpHttpSessions(async () =>
    (await import('./mcp/tools.js')).createReviewTools(gateway, {
      defaultWaitSeconds: config.blocking_timeout_seconds,
      progressIntervalMs: options.mcpProgressIntervalMs,
    }),
  );
  const app = createApp({
    reviews: services.reviews,
    feedback: services.feedback,
    attachments: services.attachments,
    statistics: services.statistics,
    eventStreams,
    mcpSessions,
    apiKey: config.enable_auth ? config.api_key : undefined,
    loopbackOnly: isLoopback(config.api_host),
    rateLimitPerMinute: config.rate_limit_per_minute,
    pingDatabase: services.db.ping,
    blockingTimeoutSeconds: config.blocking_timeout_seconds,
    log,
    validateResponses: options.validateResponses,
  });
  let listening: Listening;
  try {
    listening = await listen(httpServerFor(app), config.api_host, config.api_port);
  } catch (error) {
    await services.close();
    throw error;
  }

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

  return { url: listening.url, port: listening.port, services, eventStreams, mcpSessions, close };
}

export interface RunningDashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The reviewer dashboard on `dashboard_host:dashboard_port`, forwarding `/api` to `apiUrl`. */
export async function startDashboard(config: Config, options: { apiUrl: string; log?: Logger; staticDir?: string }): Promise<RunningDashboard> {
  const app = createDashboardApp({
    apiUrl: options.apiUrl,
    log: options.log ?? silentLogger,
    staticDir: options.staticDir,
    loopbackOnly: isLoopback(config.dashboard_host),
  });
  const listening = await listen(httpServerFor(app), config.dashboard_host, config.dashboard_port);
  return { url: listening.url, port: listening.port, close: () => listening.close(1_000) };
}

interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting, runs `answerWaiting` so held requests get their answers, then waits up
   * to `drainMs` for in-flight responses before cutting the remaining sockets.
   */
  close(drainMs: number, answerWaiting?: () => void): Promise<void>;
}

function listen(server: http.Server, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const actualPort = (server.address() as AddressInfo).port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${actualPort}`,
        port: actualPort,
        close: async (drainMs, answerWaiting) => {
          const drained = new Promise<void>((done) => server.close(() => done()));
          answerWaiting?.();
          server.closeIdleConnections();
          const timer = setTimeout(() => server.closeAllConnections(), drainMs);
          await drained;
          clearTimeout(timer);
        },
      });
    });
  });
}
