import path from 'node:path';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { openApiDocument } from './document';

/**
 * The validators this process has built, one per `validateResponses`: compiling the document's
 * schemas takes a good part of a second, and every server of the process (tests start hundreds)
 * checks against the same document.
 */
const validators = new Map<boolean, RequestHandler>();

/**
 * Checks requests (and, in tests, responses) against the OpenAPI document. The validator, its
 * JSON Schema compiler and the document are loaded by the first request that needs them, not
 * at start-up: about 6 MB a server sitting idle in the tray need not hold.
 */
export function openApiValidation(validateResponses: boolean): RequestHandler {
  return (req, res, next) => {
    let validator = validators.get(validateResponses);
    if (!validator) {
      validator = compileValidator(validateResponses);
      validators.set(validateResponses, validator);
    }
    validator(req, res, next);
  };
}

/**
 * Checks a request whose body the route has read itself (a multipart create's `review` part,
 * put into `req.body`) against the document, as the middleware checks a JSON body: the same
 * rules, and the same problem naming the field out of place. Responses are not checked again.
 */
export function validateRequest(req: Request, res: Response): Promise<void> {
  let validator = validators.get(false);
  if (!validator) {
    validator = compileValidator(false);
    validators.set(false, validator);
  }
  const check = validator;
  return new Promise((resolve, reject) => {
    check(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}

function compileValidator(validateResponses: boolean): RequestHandler {
  const { middleware } = require('express-openapi-validator') as typeof import('express-openapi-validator');
  memoizeRouteCompilation();
  narrowRouteLookup();
  const router = express.Router();
  router.use(
    middleware({
      apiSpec: openApiDocument() as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses,
      validateSecurity: false,
      // Uploads are streamed to disk by our own multipart reader, never buffered by the validator.
      fileUploader: false,
    }),
  );
  return router;
}

interface PathToRegexp {
  pathToRegexp(path: string, options?: object): { regexp: RegExp; keys: unknown[] };
}

const memoized = Symbol('greenlight.memoized');

/**
 * The validator finds a request's operation by compiling documented paths with path-to-regexp,
 * on every request, until one matches: a sixth of the CPU a create cost. What a path compiles to
 * depends on nothing but the path and the options, so the module's function (the one instance the
 * validator and Express's router share) answers from a cache. The result is only read: the
 * validator execs the expression, which has no global flag, and maps the keys.
 */
function memoizeRouteCompilation(): void {
  const validatorDir = path.dirname(require.resolve('express-openapi-validator'));
  const module = require(require.resolve('path-to-regexp', { paths: [validatorDir] })) as PathToRegexp & { [memoized]?: true };
  if (module[memoized]) return;
  const compile = module.pathToRegexp;
  // Per route, each set of options it was compiled with (the validator builds a fresh options object every time).
  const compiled = new Map<string, Array<{ options: object; result: ReturnType<PathToRegexp['pathToRegexp']> }>>();
  module.pathToRegexp = (route, options = {}) => {
    if (typeof route !== 'string') return compile(route, options);
    let variants = compiled.get(route);
    if (!variants) compiled.set(route, (variants = []));
    const known = variants.find((variant) => sameOptions(variant.options, options));
    if (known) return known.result;
    const result = compile(route, options);
    variants.push({ options: { ...options }, result });
    return result;
  };
  module[memoized] = true;
}

function sameOptions(a: object, b: object): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => (a as Record<string, unknown>)[key] === (b as Record<string, unknown>)[key]);
}

type RouteMap = Record<string, unknown>;

interface OpenApiContext {
  expressRouteMap: RouteMap;
  useRequestUrl: boolean;
}

interface MetadataModule {
  applyOpenApiMetadata(context: OpenApiContext, responseApiDoc: unknown): RequestHandler;
  [memoized]?: true;
}

/** A path's first segment, as the validator's case-insensitive routing compares it: '/reviews/7' → 'reviews'. */
function firstSegment(path: string): string {
  return path.split('/', 2)[1].toLowerCase();
}

/**
 * Even memoized, finding a request's operation tries the documented paths one by one in the
 * validator's order (a create's is the 32nd of 52, a tenth of the CPU it cost). Every path of the
 * document begins with a fixed segment, and a path can only match a request that begins with the
 * same one, so while the validator looks a request up it is shown only the paths of that
 * request's first segment (six for '/reviews…'), or all of them for a request no path begins
 * like, where it finds nothing either way. What it finds, and every answer it gives, is as before.
 */
function narrowRouteLookup(): void {
  const validatorDir = path.dirname(require.resolve('express-openapi-validator'));
  let metadata: MetadataModule;
  try {
    metadata = require(path.join(validatorDir, 'middlewares', 'openapi.metadata.js')) as MetadataModule;
  } catch {
    // A version of the validator laid out otherwise looks requests up its own way, unnarrowed.
    return;
  }
  if (metadata[memoized] || typeof metadata.applyOpenApiMetadata !== 'function') return;
  const apply = metadata.applyOpenApiMetadata;
  metadata.applyOpenApiMetadata = (context, responseApiDoc) => {
    const all = context.expressRouteMap;
    const routes = Object.keys(all);
    // A path beginning with a parameter could match any request: then nothing is narrowed.
    if (routes.some((route) => route.startsWith('/:'))) return apply(context, responseApiDoc);
    const bySegment = new Map<string, RouteMap>();
    for (const route of routes) {
      const segment = firstSegment(route);
      bySegment.set(segment, { ...bySegment.get(segment), [route]: all[route] });
    }
    let shown = all;
    // Only this lookup sees the narrowed map, and it reads it synchronously, while it runs.
    const narrowed: OpenApiContext = Object.create(context, { expressRouteMap: { get: () => shown } });
    const lookup = apply(narrowed, responseApiDoc);
    return (req, res, next) => {
      shown = bySegment.get(firstSegment((context.useRequestUrl ? req.url : req.originalUrl).split('?')[0])) ?? all;
      try {
        lookup(req, res, next);
      } finally {
        shown = all;
      }
    };
  };
  metadata[memoized] = true;
}
