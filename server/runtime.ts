import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Config, ConfigError, isLoopback, publicUrlOf } from './config/settings';
import { type Database, openDatabase } from './db/connection';
import { DiskSpace } from './db/disk-space';
import { migrate } from './db/migrate';
import { defineModels } from './db/models';
import { oneAtATime } from './db/one-at-a-time';
import { Outbox } from './db/outbox';
import { AttachmentStore } from './db/attachment-store';
import { FeedbackStore } from './db/feedback-store';
import { OrganizationStore } from './db/organization-store';
import { AgentStore } from './db/agent-store';
import { AuditStore } from './db/audit-store';
import { PeopleStore } from './db/people-store';
import { ReviewStore } from './db/review-store';
import { RoutingRuleStore } from './db/routing-rule-store';
import { WorkflowStore } from './db/workflow-store';
import { WebhookStore } from './db/webhook-store';
import { StatisticsQuery } from './db/statistics-query';
import { DatabaseUnitOfWork } from './db/unit-of-work';
import { AttachmentService } from './domain/attachments';
import { EventFeed } from './domain/events';
import { FeedbackService } from './domain/feedback';
import { OrganizationService } from './domain/organizations';
import { AgentService } from './domain/agents';
import { AuditService } from './domain/audit';
import { OrganizationRouting } from './domain/organization-routing';
import { PeopleService } from './domain/people';
import { Workflows } from './domain/workflows';
import { webhookEnqueuer, WebhookService } from './domain/webhooks';
import { WebhookDispatcher } from './webhooks/dispatcher';
import { Invitations, SignInService } from './domain/sign-in';
import { passwordHashing, type ScryptCost } from './domain/passwords';
import { type ReviewUseCases, reviewUseCases } from './domain/reviews/use-cases';
import { StatisticsService } from './domain/statistics';
import { DecisionWaiters } from './domain/waiters';
import { ReviewExpiry } from './domain/expiry';
import type { Policy } from './domain/policy';
import { AttachmentFiles } from './storage/attachment-files';
import { createApp } from './http/app';
import type { Exposure } from './http/protection';
import { type ClientConnections, type ConnectionLimits, connectionLimitsFor, outgoingSocketsFor } from './http/connections';
import { httpServerFor } from './http/express-server';
import { EventStreams } from './http/event-stream';
import { createDashboardApp } from './dashboard/app';
import { type Logger, silentLogger } from './logging';
import { localGateway } from './mcp/gateway';
import { McpHttpSessions, type McpSessionOptions } from './mcp/http-sessions';
import type { ReviewToolsOptions } from './mcp/tools';

/** Everything behind the HTTP layer, wired to one database. */
export interface Services {
  db: Database;
  /** Whether writes find room on the disk under data_dir. */
  diskSpace: DiskSpace;
  /** Committed events, in the order they reached this process. */
  feed: EventFeed;
  outbox: Outbox;
  waiters: DecisionWaiters;
  reviews: ReviewUseCases;
  feedback: FeedbackService;
  attachments: AttachmentService;
  files: AttachmentFiles;
  statistics: StatisticsService;
  /** Organizations and their API keys (served in the hosted edition). */
  organizations: OrganizationService;
  /** Agents registered with organizations (hosted edition). */
  agents: AgentService;
  /** Organizations' audit logs (hosted edition). */
  audit: AuditService;
  /** Organizations' users and teams (hosted edition). */
  people: PeopleService;
  /** People signing in to the dashboard (hosted edition). */
  signIn: SignInService;
  /** Organizations' routing rules (hosted edition). */
  organizationRouting: OrganizationRouting;
  /** Organizations' approval workflows (hosted edition). */
  workflows: Workflows;
  /** Organizations' webhook endpoints (hosted edition). */
  webhooks: WebhookService;
  /** Sends what the outbox owes webhook endpoints (hosted edition); a test that sets the clock wakes it. */
  webhookDispatcher: WebhookDispatcher | undefined;
  /** Sockets the process may open itself at once (the dispatcher's deliveries): they share the client connections' descriptors. */
  outgoingSockets: number;
  /** The review policy in force. */
  policy(): Policy;
  /** Puts a reloaded policy in force for new reviews and the next expiries; waiting agents are untouched. */
  replacePolicy(policy: Policy): void;
  /** Stops background work (the expiry timer) and closes the database. */
  close(): Promise<void>;
}

/** What the services take besides the configuration: tests set them. */
export interface ServiceOptions {
  clock?: () => number;
  /** scrypt's cost for new passwords and for the timing of unknown e-mails (default PASSWORD_COST). */
  passwordCost?: ScryptCost;
}

export async function openServices(config: Config, log: Logger, { clock = Date.now, passwordCost }: ServiceOptions = {}): Promise<Services> {
  // Attachments and the pid file live here, whichever database holds the rows.
  fs.mkdirSync(config.data_dir, { recursive: true });
  const diskSpace = new DiskSpace(config.data_dir, clock);
  const db = await openDatabase(config.database_url, { diskSpace });
  try {
    const applied = await migrate(db.sequelize);
    if (applied.length > 0) log.info('database migrated', { database: db.location, applied });
  } catch (error) {
    await db.close();
    throw error;
  }
  const feed = new EventFeed((event, error) => log.error('event listener failed', { event: event.type, error: String(error) }));
  const outbox = new Outbox(db, clock);
  // The audit log is the hosted edition's: a self-hosted installation's organization_id is a label.
  const auditStore = new AuditStore(db);
  const webhookStore = new WebhookStore(db);
  const hostedEdition = config.edition === 'hosted';
  const unitOfWork = new DatabaseUnitOfWork(db, outbox, feed, {
    auditLog: hostedEdition ? auditStore : undefined,
    // Self-hosted: the endpoints of the `webhooks` setting, if any, receive every event.
    webhooks: hostedEdition || config.webhooks.length > 0 ? webhookEnqueuer(webhookStore, clock, !hostedEdition) : undefined,
    clock,
  });
  const webhookTargets = { allowPrivate: config.webhook_allow_private_targets, allowHttp: config.webhook_allow_http };
  let dispatcher: WebhookDispatcher | undefined;
  const webhooks = new WebhookService(webhookStore, unitOfWork, webhookTargets, config.max_webhooks_per_organization, clock, () => dispatcher?.wake());
  const waiters = new DecisionWaiters(feed);
  const models = defineModels(db.sequelize);
  const reviewStore = new ReviewStore(db, models);
  let policy = config.routing;
  const currentPolicy = (): Policy => policy;
  const agentStore = new AgentStore(db);
  const peopleStore = new PeopleStore(db);
  // The hosted edition's organizations route by their own rules first.
  const organizationRouting = new OrganizationRouting(new RoutingRuleStore(db), peopleStore, unitOfWork, clock);
  const organizationStore = new OrganizationStore(db);
  const workflows = new Workflows(new WorkflowStore(db), organizationStore, peopleStore, unitOfWork, clock);
  const reviews = reviewUseCases({
    reviews: reviewStore,
    agents: agentStore,
    people: peopleStore,
    organizationRouting: hostedEdition ? organizationRouting : undefined,
    workflows: hostedEdition ? workflows : undefined,
    unitOfWork,
    waiters,
    policy: currentPolicy,
    maxWaiting: config.max_waiting_requests,
    refuseHiddenCharacters: config.refuse_hidden_characters,
    clock,
  });
  const files = new AttachmentFiles(path.join(config.data_dir, 'attachments'), diskSpace);
  const attachmentStore = new AttachmentStore(models);
  const exclusive = oneAtATime(db);
  await exclusive.run('attachment-sweep', () => sweepAttachments(files, attachmentStore, db, log, clock));
  const limits = { maxBytes: config.max_attachment_bytes, maxPerReview: config.max_attachments_per_review };
  const attachments = new AttachmentService({
    attachments: attachmentStore,
    reviews: reviewStore,
    files,
    unitOfWork,
    limits,
    refuseHiddenCharacters: config.refuse_hidden_characters,
    clock,
  });
  const feedback = new FeedbackService(new FeedbackStore(models), reviewStore, unitOfWork, clock);
  const statistics = new StatisticsService(new StatisticsQuery(db.sequelize), clock);
  const organizations = new OrganizationService({ organizations: organizationStore, agents: agentStore, unitOfWork, clock });
  const agents = new AgentService(agentStore, unitOfWork, clock);
  const audit = new AuditService(auditStore);
  const people = new PeopleService(peopleStore, peopleStore, new Invitations(peopleStore, publicUrlOf(config), clock), unitOfWork, clock);
  const signIn = new SignInService(peopleStore, unitOfWork, clock, passwordHashing(passwordCost));
  const expiry = new ReviewExpiry({ store: reviewStore, oneAtATime: exclusive, deciding: reviews.deciding, reading: reviews.reading, feed, policy: currentPolicy, log, clock });
  await expiry.start();
  if (!hostedEdition) await webhookStore.syncInstallationWebhooks(config.webhooks, clock());
  const deliveryLimits = { inFlight: outgoingSocketsFor(config.webhook_max_in_flight), inFlightPerOrganization: config.webhook_max_in_flight_per_organization };
  dispatcher =
    hostedEdition || config.webhooks.length > 0
    ? new WebhookDispatcher({ webhooks: webhookStore, unitOfWork, feed, scheduleSeconds: config.webhook_retry_schedule, limits: deliveryLimits, targets: webhookTargets, log, clock })
    : undefined;
  if (dispatcher && deliveryLimits.inFlight < config.webhook_max_in_flight) {
    log.warn('webhook deliveries in flight limited by the open-file limit', { webhook_max_in_flight: config.webhook_max_in_flight, allowed: deliveryLimits.inFlight });
  }
  await dispatcher?.start();
  const relay = db.dialect === 'postgres' ? await relayFromOtherProcesses(config.database_url, outbox, feed, reviews.waiting, log) : undefined;
  return {
    db,
    diskSpace,
    feed,
    outbox,
    waiters,
    reviews,
    feedback,
    attachments,
    files,
    statistics,
    organizations,
    agents,
    audit,
    people,
    signIn,
    organizationRouting,
    workflows,
    webhooks,
    webhookDispatcher: dispatcher,
    outgoingSockets: dispatcher ? deliveryLimits.inFlight : 0,
    policy: currentPolicy,
    replacePolicy: (next) => {
      policy = next;
    },
    close: async () => {
      expiry.stop();
      await dispatcher?.stop();
      await relay?.stop();
      await db.close();
    },
  };
}

/**
 * Removes the files of uploads that never committed: stopped mid-upload, or moved into place
 * by a process killed before its commit. With a database other processes share, files of the
 * last minutes are spared: they may belong to another process's upload under way.
 */
async function sweepAttachments(files: AttachmentFiles, store: AttachmentStore, db: Database, log: Logger, clock: () => number): Promise<void> {
  const olderThan = db.dialect === 'sqlite' ? Number.POSITIVE_INFINITY : clock() - SHARED_SWEEP_SPARES_MS;
  const abandoned = await files.sweepIncoming(olderThan);
  if (abandoned > 0) log.info('removed unfinished uploads', { count: abandoned });
  const kept = await store.storageKeys();
  const unreferenced = await files.sweepUnreferenced((storageKey) => kept.has(storageKey), olderThan);
  if (unreferenced > 0) log.info('removed files of uploads that never committed', { count: unreferenced });
}

/** Longer than any upload may take to arrive (the request timeout), with room to spare. */
const SHARED_SWEEP_SPARES_MS = 10 * 60_000;

/** Other API processes on the same PostgreSQL: their events reach this process's feed. */
async function relayFromOtherProcesses(url: string, outbox: Outbox, feed: EventFeed, waiting: ReviewUseCases['waiting'], log: Logger): Promise<{ stop(): Promise<void> }> {
  // Loaded only for PostgreSQL, with its driver.
  const { PostgresEventRelay } = await import('./db/postgres-relay.js');
  const relay = new PostgresEventRelay({ url, outbox, feed, recheck: () => waiting.recheckWaiting(), log });
  await relay.start();
  return relay;
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
  /** The service's notion of now (tests set it to make durations exact). */
  clock?: () => number;
  /** scrypt's cost (tests set a low one: they sign people in by the hundred). */
  passwordCost?: ScryptCost;
}

export class PortInUseError extends Error {
  constructor(readonly host: string, readonly port: number) {
    super(`port ${port} on ${host} is already in use`);
    this.name = 'PortInUseError';
  }
}

/**
 * Who can reach a server bound to `config[hostKey]`. A server open to the network with
 * authentication off would let anyone who reaches the machine read and decide reviews: that
 * is refused unless the configuration says the risk is accepted.
 */
function exposureOf(config: Config, hostKey: 'api_host' | 'dashboard_host'): Exposure {
  const loopbackOnly = isLoopback(config[hostKey]);
  const authenticated = config.enable_auth || config.edition === 'hosted';
  if (!loopbackOnly && !authenticated && !config.allow_unauthenticated_network) {
    throw new ConfigError(
      `${hostKey} is ${config[hostKey]}, which other machines can reach, and enable_auth is false: anyone on the network could read and decide reviews. ` +
        'Turn on enable_auth with an api_key, bind to 127.0.0.1, or accept the risk with allow_unauthenticated_network: true (--allow-unauthenticated-network)',
    );
  }
  return { loopbackOnly, authenticated, allowedHosts: config.allowed_hosts, publicUrl: config.public_url };
}

/**
 * Says, once a server listens, who can use it when it is open to the network without a key:
 * allow_unauthenticated_network accepts that risk, and the log is where it stays visible.
 */
function warnIfOpenWithoutKey(exposure: Exposure, log: Logger, what: string, listening: Listening, reach: string): void {
  if (exposure.loopbackOnly || exposure.authenticated) return;
  log.warn(
    `${what} on ${listening.url} asks for no API key and is open to the network (allow_unauthenticated_network): ` +
      `anyone who can reach this machine on port ${listening.port} can ${reach}`,
  );
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const exposure = exposureOf(config, 'api_host');
  const log = options.log ?? silentLogger;
  const services = await openServices(config, log, { clock: options.clock, passwordCost: options.passwordCost });
  const eventStreams = new EventStreams(services.feed, services.outbox, { heartbeatMs: options.heartbeatMs });
  // The MCP SDK loads with the first /mcp session, not at start (see McpHttpSessions.open).
  const mcpSessions = new McpHttpSessions(
    async (principal) =>
      (await import('./mcp/tools.js')).createReviewTools(localGateway(services, principal), {
        ...options.mcpTools,
        defaultWaitSeconds: config.blocking_timeout_seconds,
      }),
    options.mcpSessionLimits,
  );
  // In this process or another, a revoked credential ends what was opened with it.
  services.feed.onRevocation(({ principal_id }) => {
    eventStreams.endStreamsOf(principal_id);
    void mcpSessions.closeSessionsOf(principal_id);
  });
  const app = createApp({
    reviews: services.reviews,
    feedback: services.feedback,
    attachments: services.attachments,
    files: services.files,
    statistics: services.statistics,
    eventStreams,
    mcpSessions,
    apiKey: config.enable_auth ? config.api_key : undefined,
    hosted:
      config.edition === 'hosted'
        ? {
            organizations: services.organizations,
            agents: services.agents,
            audit: services.audit,
            people: services.people,
            routing: services.organizationRouting,
            workflows: services.workflows,
            webhooks: services.webhooks,
            signIn: services.signIn,
            operatorKey: config.operator_key,
            secureCookies: publicUrlOf(config).startsWith('https:'),
          }
        : undefined,
    exposure,
    trustedProxies: config.trusted_proxies,
    rateLimitPerMinute: config.rate_limit_per_minute,
    pingDatabase: services.db.ping,
    disk: () => services.diskSpace.report(),
    clock: options.clock,
    blockingTimeoutSeconds: config.blocking_timeout_seconds,
    log,
    validateResponses: options.validateResponses,
  });
  let listening: Listening;
  try {
    const limits = { ...connectionLimitsFor({ maxWaitingRequests: config.max_waiting_requests, outgoingSockets: services.outgoingSockets }), ...options.connectionLimits };
    listening = await listen(httpServerFor(app, limits), config.api_host, config.api_port, log);
  } catch (error) {
    await services.close();
    throw error;
  }
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

  return { url: listening.url, port: listening.port, services, eventStreams, mcpSessions, close };
}

export interface RunningDashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The reviewer dashboard on `dashboard_host:dashboard_port`, forwarding `/api` to `apiUrl`. */
export async function startDashboard(config: Config, options: { apiUrl: string; log?: Logger; staticDir?: string }): Promise<RunningDashboard> {
  const log = options.log ?? silentLogger;
  const exposure = exposureOf(config, 'dashboard_host');
  const app = createDashboardApp({ apiUrl: options.apiUrl, log, staticDir: options.staticDir, exposure, trustedProxies: config.trusted_proxies });
  const limits = connectionLimitsFor({ maxWaitingRequests: config.max_waiting_requests, outgoingSockets: 0 });
  const listening = await listen(httpServerFor(app, limits), config.dashboard_host, config.dashboard_port, log);
  warnIfOpenWithoutKey(exposure, log, 'the dashboard', listening, 'read and decide every review through it');
  return { url: listening.url, port: listening.port, close: () => listening.close(1_000) };
}

interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting connections and requests, runs `answerWaiting` so held requests get their
   * answers, and closes once every request taken has been answered. Requests still arriving
   * after `drainMs` (a slow upload) are cut: nothing of them was stored.
   */
  close(drainMs: number, answerWaiting?: () => void): Promise<void>;
}

/** After the drain, how long requests that fully arrived get to be answered before everything is cut. */
const ANSWER_GRACE_MS = 10_000;

function within(ms: number, work: Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([work.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

function listen(connections: ClientConnections, host: string, port: number, log: Logger): Promise<Listening> {
  const { server } = connections;
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error);
    };
    server.once('error', onError);
    // No deeper than the connections' burst reserve: one round of accepting takes in the whole backlog.
    server.listen({ port, host, backlog: connections.limits.burstReserve }, () => {
      server.off('error', onError);
      const actualPort = (server.address() as AddressInfo).port;
      // Accepting can fail for a moment (the system out of descriptors or memory); unheard, the error would end the process.
      server.on('error', (error: NodeJS.ErrnoException) => log.warn('could not accept a connection', { port: actualPort, code: error.code }));
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${actualPort}`,
        port: actualPort,
        close: async (drainMs, answerWaiting) => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          connections.drain();
          answerWaiting?.();
          if (!(await within(drainMs, connections.settled())) && connections.dropUnfinishedRequests() > 0) {
            if (!(await within(ANSWER_GRACE_MS, connections.settled()))) {
              log.warn('shutdown cut requests that were still being answered', { port: actualPort });
            }
          }
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}
