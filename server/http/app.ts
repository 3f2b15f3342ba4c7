import express, { type Express, type Request } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { AttachmentService } from '../domain/attachments';
import type { FeedbackService } from '../domain/feedback';
import type { Statistics } from '../domain/records';
import type { ReviewService } from '../domain/reviews';
import type { Logger } from '../logging';
import type { McpHttpSessions } from '../mcp/http-sessions';
import { requireApiKey } from './auth';
import { boundedJsonShape } from './limits';
import { rateLimit } from './rate-limit';
import { loopbackHostsOnly, refuseCrossSiteWrites, requireJsonBodies, securityHeaders } from './protection';
import type { EventStreams } from './event-stream';
import { openApiDocument } from './openapi/document';
import { errorHandler, notFoundHandler } from './problems';
import { attachmentRoutes } from './routes/attachments';
import { docsRoutes } from './routes/docs';
import { eventRoutes } from './routes/events';
import { feedbackRoutes } from './routes/feedback';
import { healthRoutes } from './routes/health';
import { reviewRoutes } from './routes/reviews';
import { statisticsRoutes } from './routes/statistics';

export interface AppOptions {
  reviews: ReviewService;
  feedback: FeedbackService;
  attachments: AttachmentService;
  statistics: (organizationId?: number) => Promise<Statistics>;
  eventStreams: EventStreams;
  /** MCP over Streamable HTTP at `/mcp`, behind the same API key as the rest. */
  mcpSessions: McpHttpSessions;
  pingDatabase: () => Promise<void>;
  blockingTimeoutSeconds: number;
  /** Set when authentication is on. */
  apiKey?: string;
  /** Requests per minute per caller; 0 is no limit. */
  rateLimitPerMinute: number;
  /** The server listens on loopback only: requests must name this machine (see protection.ts). */
  loopbackOnly: boolean;
  log: Logger;
  /** Check every response against the OpenAPI document too (tests turn this on). */
  validateResponses?: boolean;
}

/** The one endpoint that takes multipart bodies. */
const isUpload = (req: Request): boolean => req.method === 'POST' && /^\/reviews\/[^/]+\/attachments\/?$/.test(req.path);

/**
 * The HTTP API as an Express app that does not listen by itself, so the CLI, the desktop
 * app and tests can each host it.
 */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // JSON answers are small and rarely repeated; hashing each one for an ETag costs more than it saves.
  app.set('etag', false);

  app.use(securityHeaders());
  if (options.loopbackOnly) app.use(loopbackHostsOnly());
  app.use(refuseCrossSiteWrites({ loopbackOnly: options.loopbackOnly }));
  if (options.apiKey) app.use(requireApiKey(options.apiKey));
  if (options.rateLimitPerMinute > 0) app.use(rateLimit(options.rateLimitPerMinute));
  app.use(requireJsonBodies(isUpload));
  // JSON-RPC, not REST: outside the OpenAPI document and its validator; the transport reads its own body.
  app.all('/mcp', (req, res) => options.mcpSessions.handle(req, res));
  app.use(docsRoutes(openApiDocument));
  // Compressed request bodies are refused (415): nothing sends them, and inflating one is work an attacker chooses.
  app.use(express.json({ limit: '1mb', inflate: false }));
  app.use(boundedJsonShape());
  app.use(
    OpenApiValidator.middleware({
      apiSpec: openApiDocument() as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: options.validateResponses ?? false,
      validateSecurity: false,
      // Uploads are streamed to disk by our own multipart reader, never buffered by the validator.
      fileUploader: false,
    }),
  );

  app.use(healthRoutes(options.pingDatabase));
  app.use(reviewRoutes({ reviews: options.reviews, blockingTimeoutSeconds: options.blockingTimeoutSeconds }));
  app.use(feedbackRoutes(options.feedback));
  app.use(attachmentRoutes(options.attachments));
  app.use(statisticsRoutes(options.statistics));
  app.use(eventRoutes(options.eventStreams));

  app.use(notFoundHandler);
  app.use(errorHandler(options.log));
  return app;
}
