import express, { type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { ReviewService } from '../domain/reviews';
import type { Logger } from '../logging';
import { openApiDocument } from './openapi/document';
import { errorHandler, notFoundHandler } from './problems';
import { healthRoutes } from './routes/health';
import { reviewRoutes } from './routes/reviews';

export interface AppOptions {
  reviews: ReviewService;
  pingDatabase: () => Promise<void>;
  blockingTimeoutSeconds: number;
  log: Logger;
  /** Check every response against the OpenAPI document too (tests turn this on). */
  validateResponses?: boolean;
}

/**
 * The HTTP API as an Express app that does not listen by itself, so the CLI, the desktop
 * app and tests can each host it.
 */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // JSON answers are small and rarely repeated; hashing each one for an ETag costs more than it saves.
  app.set('etag', false);

  app.use(express.json({ limit: '1mb' }));
  app.use(
    OpenApiValidator.middleware({
      apiSpec: openApiDocument() as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: options.validateResponses ?? false,
      validateSecurity: false,
    }),
  );

  app.use(healthRoutes(options.pingDatabase));
  app.use(reviewRoutes({ reviews: options.reviews, blockingTimeoutSeconds: options.blockingTimeoutSeconds }));

  app.use(notFoundHandler);
  app.use(errorHandler(options.log));
  return app;
}
