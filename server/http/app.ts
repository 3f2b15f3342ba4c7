import express, { type Express, type Request } from 'express';
import type { DiskReport } from '../system/disk-space';
import type { AttachmentService } from '../domain/reviews/attachments';
import type { FeedbackService } from '../domain/reviews/feedback';
import type { StatisticsService } from '../domain/reviews/statistics';
import type { AttachmentFiles } from '../storage/attachment-files';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import type { Logger } from '../logging';
import type { McpHttpSessions } from '../mcp/http-sessions';
import { principalOf } from './auth';
import { clientAddress, trustProxies } from './client-address';
import type { HttpEdition } from './editions';
import { boundedJsonShape } from './limits';
import { parseQuery } from './params';
import { rateLimit } from './rate-limit';
import { type Exposure, giveSecurityHeaders, hostsAllowed, refuseCrossSiteWrites, requireJsonBodies } from './protection';
import type { EventStreams } from './event-stream';
import { openApiDocument } from './openapi/document';
import { openApiValidation } from './openapi/validation';
import { errorHandler, notFoundHandler } from './problems';
import { attachmentRoutes } from './routes/attachments';
import { docsRoutes } from './routes/docs';
import { eventRoutes } from './routes/events';
import { feedbackRoutes } from './routes/feedback';
import { healthRoutes } from './routes/health';
import { receiptKeyRoutes, receiptVerificationRoutes } from './routes/receipt-keys';
import type { ReceiptKeys } from '../receipts/keys';
import { reviewRoutes } from './routes/reviews';
import { statisticsRoutes } from './routes/statistics';
import { type SlackHttpOptions, slackRoutes } from './routes/slack';

export interface AppOptions {
  reviews: ReviewUseCases;
  feedback: FeedbackService;
  attachments: AttachmentService;
  /** Where uploads stream to while they arrive. */
  files: AttachmentFiles;
  statistics: StatisticsService;
  /** The public keys that verify decision receipts, at /.well-known/jwks.json. */
  receiptKeys: Pick<ReceiptKeys, 'jwks' | 'verify'>;
  eventStreams: EventStreams;
  /** MCP over Streamable HTTP at `/mcp`, behind the same API key as the rest. */
  mcpSessions: McpHttpSessions;
  pingDatabase: () => Promise<void>;
  /** Whether the disk under data_dir has room, for /health. */
  disk: () => Promise<DiskReport>;
  blockingTimeoutSeconds: number;
  /** How callers authenticate, who may call what, and the routes the edition adds. */
  edition: HttpEdition;
  /** Requests per minute per caller; 0 is no limit. */
  rateLimitPerMinute: number;
  /** Who can reach the server: decides which `Host` names it answers to (see protection.ts). */
  exposure: Exposure;
  /** Peers whose `X-Forwarded-For` names the client the limits count (`trusted_proxies`). */
  trustedProxies: readonly string[];
  log: Logger;
  /** The limits' notion of now (tests set it). */
  clock?: () => number;
  /** Check every response against the OpenAPI document too (tests turn this on). */
  validateResponses?: boolean;
  /** Slack's signed requests (interactions, events). */
  slack: SlackHttpOptions;
}

/** The endpoints that take multipart bodies: an upload to a review, and a review filed with its files. */
const takesMultipart = (req: Request): boolean => req.method === 'POST' && /^\/reviews(?:\/[^/]+\/attachments)?\/?$/.test(req.path);

/**
 * The HTTP API as an Express app that does not listen by itself, so the CLI, the desktop
 * app and tests can each host it.
 */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // JSON answers are small and rarely repeated; hashing each one for an ETag costs more than it saves.
  app.set('etag', false);
  app.set('query parser', parseQuery);
  trustProxies(app, options.trustedProxies);

  giveSecurityHeaders(app);
  app.use(hostsAllowed(options.exposure));
  app.use(refuseCrossSiteWrites(options.exposure));
  const { edition } = options;
  for (const authenticate of edition.authentication) app.use(authenticate);
  if (options.rateLimitPerMinute > 0) app.use(rateLimit(options.rateLimitPerMinute, options.clock));
  // Signed by Slack, urlencoded, and checked over their raw bytes: before the JSON-only rule and parser.
  app.use(slackRoutes(options.slack));
  app.use(requireJsonBodies(takesMultipart));
  // JSON-RPC, not REST: outside the OpenAPI document and its validator; the transport reads its own body.
  // Sessions are limited per API key and address: all of an installation's clients may share its one key.
  for (const access of edition.mcpAccess) app.use('/mcp', access);
  app.all('/mcp', (req, res) => options.mcpSessions.handle(req, res, principalOf(res), clientAddress(req)));
  app.use(docsRoutes(openApiDocument));
  // Compressed request bodies are refused (415): nothing sends them, and inflating one is work an attacker chooses.
  app.use(express.json({ limit: '1mb', inflate: false }));
  app.use(boundedJsonShape());
  // Probes call this often and it takes no input: it answers without loading the validator.
  app.use(healthRoutes(options.pingDatabase, options.disk, edition.name));
  app.use(receiptKeyRoutes(options.receiptKeys));
  app.use(openApiValidation(options.validateResponses ?? false));
  for (const access of edition.operationAccess) app.use(access);

  reviewRoutes(app, { reviews: options.reviews, blockingTimeoutSeconds: options.blockingTimeoutSeconds, attachments: options.attachments, files: options.files });
  app.use(feedbackRoutes(options.feedback));
  app.use(attachmentRoutes(options.attachments, options.files));
  app.use(statisticsRoutes(options.statistics));
  app.use(receiptVerificationRoutes(options.receiptKeys));
  app.use(eventRoutes(options.eventStreams));
  for (const routes of edition.routes) app.use(routes);

  app.use(notFoundHandler);
  app.use(errorHandler(options.log));
  return app;
}
