import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isOutOfSpace } from '../system/disk-space';
import { errorCodes, isOutOfFiles } from '../system/system-errors';
import { AppError, type FieldError } from '../domain/shared/errors';
import type { Logger } from '../logging';

/** Sends an RFC 9457 problem document. */
export function sendProblem(res: Response, status: number, detail: string, members: Record<string, unknown> = {}): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...members }));
}

/** The shape express-openapi-validator throws. */
interface ValidatorError {
  status: number;
  message: string;
  errors: Array<{ path?: string; message: string }>;
  /** A 405's `Allow`: the methods the path does take. */
  headers?: { Allow?: string };
}

function isValidatorError(error: unknown): error is ValidatorError {
  return typeof error === 'object' && error !== null && typeof (error as ValidatorError).status === 'number'
    && Array.isArray((error as ValidatorError).errors);
}

/** `/body/metadata/x` → `metadata.x`; `/query/page_size` → `page_size`. */
function fieldName(path: string | undefined): string {
  if (!path) return '(request)';
  const parts = path.replace(/^\.?\/?/, '').split(/[/.]/).filter(Boolean);
  const [location, ...rest] = parts;
  if (['body', 'query', 'params', 'path', 'headers'].includes(location ?? '')) {
    return rest.length > 0 ? rest.join('.') : location === 'body' ? '(body)' : location;
  }
  return parts.join('.');
}

/** ajv's wording, made to read well after a field name. */
const REWORDINGS: Array<[RegExp, string]> = [
  [/^must NOT have additional properties$/, 'is not a known field'],
  [/^must have required property '.*'$/, 'is required'],
  [/^Unknown query parameter '.*'$/, 'is not a known query parameter'],
  [/^must NOT have fewer than 1 characters$/, 'must not be empty'],
  [/^must NOT have fewer than (\d+) characters$/, 'must be at least $1 characters long'],
  [/^must NOT have more than (\d+) characters$/, 'must be at most $1 characters long'],
  [/^must be equal to one of the allowed values: (.*)$/, 'must be one of: $1'],
  [/^must be (integer|number|boolean|string|object|array)$/, 'must be of type $1'],
];

function friendlyMessage(message: string): string {
  for (const [pattern, replacement] of REWORDINGS) {
    if (pattern.test(message)) return message.replace(pattern, replacement);
  }
  return message;
}

function validatorProblem(error: ValidatorError): { detail: string; errors: FieldError[] } {
  if (error.status !== 400) return { detail: error.message, errors: [] };
  const errors = error.errors.map((e) => ({ field: fieldName(e.path), message: friendlyMessage(e.message) }));
  const detail = errors.map((e) => `${e.field} ${e.message}`).join('; ');
  return { detail, errors };
}

/**
 * What a body that body-parser's strict mode refused really is: valid JSON that is not an
 * object or array (`null`, `42`, `"text"`) deserves to be called that, not "not valid JSON".
 */
function jsonBodyProblem(error: { message?: string; body?: unknown }): string {
  if (typeof error.body === 'string') {
    try {
      const value: unknown = JSON.parse(error.body);
      return `the request body must be a JSON object, not ${value === null ? 'null' : `a ${typeof value}`}`;
    } catch {
      // Not JSON at all: the parser's message says where it broke.
    }
  }
  return `the request body is not valid JSON: ${error.message ?? ''}`.trim();
}

/** body-parser's errors carry a `type`; their messages are safe to show. */
function bodyParserProblem(error: { type?: string; status?: number; message?: string; body?: unknown }): [number, string] | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return [400, jsonBodyProblem(error)];
    case 'entity.too.large':
      return [413, 'the request body is too large'];
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return [415, error.message ?? 'unsupported body encoding'];
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return [400, error.message ?? 'the request body could not be read'];
    default:
      return undefined;
  }
}

/** How soon a client refused for want of disk space might try again: someone has to free it first. */
const OUT_OF_SPACE_RETRY_SECONDS = 60;
/** How soon a client refused for want of file descriptors might try again: they free up as connections and deliveries end. */
const OUT_OF_FILES_RETRY_SECONDS = 5;

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof AppError) {
      if (typeof error.members.retry_after_seconds === 'number') res.set('Retry-After', String(error.members.retry_after_seconds));
      return sendProblem(res, error.status, error.detail, error.members);
    }
    if (isValidatorError(error) && error.status >= 400 && error.status < 500) {
      const { detail, errors } = validatorProblem(error);
      if (error.headers?.Allow) res.set('Allow', error.headers.Allow);
      return sendProblem(res, error.status, detail, errors.length > 0 ? { errors } : {});
    }
    const parsed = bodyParserProblem(error as { type?: string });
    if (parsed) return sendProblem(res, parsed[0], parsed[1]);
    if (isOutOfSpace(error)) {
      res.set('Retry-After', String(OUT_OF_SPACE_RETRY_SECONDS));
      return sendProblem(res, 507, "the server's disk is full, so nothing was stored; retry once space has been freed on the server (under data_dir)");
    }
    if (isOutOfFiles(error)) {
      log.warn('a request failed for want of open files', { method: req.method, path: req.path, codes: errorCodes(error) });
      res.set('Retry-After', String(OUT_OF_FILES_RETRY_SECONDS));
      return sendProblem(res, 503, 'the server could not open a file it needs (too many are open right now), so the request was not carried out and nothing was stored; retry shortly');
    }
    log.error('unexpected error', {
      method: req.method,
      path: req.path,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    return sendProblem(res, 500, 'an unexpected error occurred; it has been logged');
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, 404, `no endpoint ${req.method} ${req.path}`);
};
