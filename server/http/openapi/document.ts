import fs from 'node:fs';
import path from 'node:path';
import { packageLicense, packageRoot, packageVersion } from '../../package-info';
import { HOSTED_CALLERS } from '../callers';

const DESCRIPTION = `
Greenlight holds an AI agent's proposed action until a person approves, rejects or modifies it,
and hands the decision back — on the same request (\`blocking: true\`) or later.

Decisions taken where the source specification is silent:

- Errors are RFC 9457 problem documents (\`application/problem+json\`) whose \`detail\` is a
  readable sentence; validation errors also list \`errors[].field\`.
- Unknown body fields and unknown query parameters are refused with 400 rather than ignored,
  so a typo (\`confidence\` for \`confidence_score\`) cannot pass silently.
- \`GET /reviews\` answers an envelope \`{reviews, total, page, page_size}\`, newest first;
  \`page\` ≥ 1, \`page_size\` 1–100 (default 20).
- A blocking create waits up to \`blocking_timeout_seconds\` (default 300), or less with
  \`Prefer: wait=N\`; past it, 408 with the \`review_id\` and the still-pending review.
- \`GET /reviews/{review_id}/decision\` answers the JSON value \`null\` while pending;
  \`?wait=N\` long-polls for up to N seconds.
- A second decision is refused with 409 carrying the decision that stands.
- Statuses are \`pending\`, \`approved\`, \`rejected\` and \`modified\`.
- Authentication is off by default in the self-hosted edition. With \`enable_auth\` every
  endpoint except \`/health\`, \`/docs\`, \`/redoc\` and \`/openapi.json\` needs
  \`Authorization: Bearer <api_key>\`, and answers 401 with \`WWW-Authenticate: Bearer\`
  without it.
- The hosted edition (\`edition: hosted\`) serves the operations marked \`x-edition: hosted\`
  (404 in the self-hosted edition) and needs an organization's API key
  (\`Authorization: Bearer gl_…\`), or a person's session cookie from \`POST /sessions\`, on
  every endpoint but the public ones: a missing or unknown credential is 401, one without the
  right is 403, and a record of another organization is 404, never 403. A change made with a
  session also needs the session's \`X-CSRF-Token\` (403 without it). Each operation's
  \`x-callers\` lists who may call it there: \`admin\` (an admin API key, or a signed-in
  admin), \`agent\` (an agent API key), \`reviewer\` and \`viewer\` (signed-in people of
  those roles) and \`operator\` (the operator key). Decisions there are always a person's: a
  signed-in person decides as themselves, and an admin key names the active reviewer or admin
  it decides for (\`reviewer_id\`); \`reviewer_name\` is then that person's name, never one
  sent.
- Feedback is listed as \`{review_id, feedback, count}\` and attachments as
  \`{review_id, attachments, count}\`.
- \`Idempotency-Key\` on \`POST /reviews\` (api.md) also answers 409 with \`Retry-After\`
  while the first request with the key is still being stored.
- Checks made in front of every route, whose answers are listed on each operation they apply
  to: 403 when a server bound to loopback is addressed by another \`Host\` (DNS rebinding), or
  when a browser marks a state change as cross-site (or, on loopback, its \`Origin\` is not
  local); 415 when a state change has a body that is not \`application/json\` (uploads:
  \`multipart/form-data\`); 413 for a JSON body past 1 MiB (uploads: past
  \`max_attachment_bytes\`); 429 with \`Retry-After\` past \`rate_limit_per_minute\`, or for an
  address that presented too many wrong API keys (30 at once, then 10 a minute), on every
  operation but \`/health\` and \`/openapi.json\`; 400 for an unknown query parameter, and for
  JSON nested deeper than 32 levels or with more than 10,000 keys and items under one field.
- Answers any operation can get from the connection layer, not listed on each: 503 with
  \`Connection: close\` and \`Retry-After\` while the server shuts down (the request was not
  processed) or when every connection it holds is busy; 503 with \`Retry-After\` when the server
  has run out of open files for a moment (the request was not carried out, nothing was stored).
- The one server is the relative URL \`.\`: the API is where this document was fetched from —
  \`http://127.0.0.1:8000\` for \`http://127.0.0.1:8000/openapi.json\`, and \`http://localhost:8501/api\`
  for \`http://localhost:8501/api/openapi.json\` through the dashboard's proxy. A client generated
  from a saved copy needs its base URL set.

\`/mcp\` serves the same reviews to MCP clients (Model Context Protocol, Streamable HTTP
transport: JSON-RPC over POST, with GET and DELETE for the session). It is not described here
because it is not a REST resource; its tools (\`request_review\`, \`get_review_decision\`,
\`check_review_status\`, \`submit_feedback\`, \`list_pending_reviews\`) describe themselves
through MCP's \`tools/list\`. It needs the same API key as the rest when authentication is on
(in the hosted edition, an organization's API key: a person's session does not open it).
`.trim();

/** Written by `npm run build` beside the compiled code, so a packaged app needs no sources. */
export const PREBUILT_DOCUMENT = path.join(__dirname, 'openapi.json');

let built: object | undefined;

/** Reads the annotations in the route sources (the TypeScript files: tsc drops comments attached to no code). */
export function generateDocument(): object {
  // Loaded only here: it is a build-time tool that a started server does not need.
  const swaggerJsdoc = require('swagger-jsdoc') as typeof import('swagger-jsdoc');
  return withCallers(withBoundedIntegers(swaggerJsdoc({
    definition: {
      openapi: '3.0.3',
      info: {
        title: 'Greenlight API',
        version: packageVersion,
        description: DESCRIPTION,
        license: { name: packageLicense, url: `https://spdx.org/licenses/${packageLicense}.html` },
      },
      // Relative, so the API is found beside the document whether it was fetched from the API or through the dashboard's `/api`.
      servers: [{ url: '.', description: 'Where this document was fetched from' }],
      tags: [
        { name: 'reviews', description: 'Review requests and their lifecycle' },
        { name: 'decisions', description: 'Approve, reject or modify a review' },
        { name: 'feedback', description: 'Ratings and comments on reviews' },
        { name: 'attachments', description: 'Files attached to reviews' },
        { name: 'statistics', description: 'Counts and averages' },
        { name: 'events', description: 'Live events for dashboards' },
        { name: 'organizations', description: 'Organizations, their API keys, agents and audit log (hosted edition only)' },
        { name: 'people', description: 'Users and teams of an organization (hosted edition only)' },
        { name: 'routing', description: 'Routing rules of an organization (hosted edition only)' },
        { name: 'evals', description: 'Evaluation suites: calibration, agreement and a suggested auto-approve rule with its guarantee (hosted edition only)' },
        { name: 'webhooks', description: 'Webhook endpoints of an organization and their deliveries (hosted edition only)' },
        { name: 'sessions', description: 'Signing in to the dashboard, and invitation links (hosted edition only)' },
        { name: 'integrations', description: 'Reviews in Slack: its signed requests, and (hosted edition) installing it' },
        { name: 'health', description: 'Liveness and database reachability' },
        { name: 'documentation', description: 'This document' },
      ],
      security: [{ bearerAuth: [] }],
    },
    apis: [path.join(packageRoot, 'server', 'http', '**', '*.ts')],
    failOnErrors: true,
  })));
}

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options']);

/**
 * Writes onto every operation that needs a key who may call it in the hosted edition
 * (`x-callers`, from the table that enforces it); an operation the table lacks stops the build.
 */
function withCallers(document: object): object {
  const paths = (document as { paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; [key: string]: unknown }>> }).paths;
  for (const [route, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!METHODS.has(method) || (Array.isArray(operation.security) && operation.security.length === 0)) continue;
      const callers = operation.operationId === undefined ? undefined : HOSTED_CALLERS[operation.operationId];
      if (!callers) throw new Error(`${method.toUpperCase()} ${route} (${operation.operationId}) has no entry in HOSTED_CALLERS (server/http/callers.ts)`);
      operation['x-callers'] = [...callers];
    }
  }
  return document;
}

/**
 * Gives every integer without bounds the range of a safe JavaScript integer, so a larger one
 * (which JavaScript cannot even hold exactly) is a 400 rather than a rounded id or count.
 * (Infinity from `1e309` in a path or query slips past this after the validator's coercion;
 * `params.ts` catches it.)
 */
function withBoundedIntegers(document: object): object {
  const pending: unknown[] = [document];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (node === null || typeof node !== 'object') continue;
    const schema = node as Record<string, unknown>;
    if (schema.type === 'integer') {
      schema.minimum ??= Number.MIN_SAFE_INTEGER;
      schema.maximum ??= Number.MAX_SAFE_INTEGER;
    }
    pending.push(...Object.values(schema));
  }
  return document;
}

/**
 * The OpenAPI 3.0 document, generated from the annotations beside the routes (or read from
 * the copy the build wrote). Built once per process; callers get their own copy because
 * validators annotate what they are given.
 */
export function openApiDocument(): Record<string, unknown> {
  built ??= fs.existsSync(PREBUILT_DOCUMENT) ? (JSON.parse(fs.readFileSync(PREBUILT_DOCUMENT, 'utf8')) as object) : generateDocument();
  return structuredClone(built) as Record<string, unknown>;
}
