import type { components } from './generated/openapi.js';

export type Problem = components['schemas']['Problem'] & Record<string, unknown>;

/** An answer the client does not retry: the server's RFC 9457 problem, with its status. */
export class GreenlightError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(`${status} ${problem.title ?? 'Error'}: ${problem.detail ?? 'no detail'}`);
    this.name = 'GreenlightError';
    this.status = status;
    this.problem = problem;
  }
}

/** Greenlight could not be reached (or kept answering 5xx) until the caller's deadline. */
export class GreenlightUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GreenlightUnavailableError';
  }
}

/** Greenlight could not be reached at all: the connection was refused or reset, the host not found. */
export class GreenlightConnectionError extends GreenlightUnavailableError {
  /** The API's address as the client was given it. */
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`could not connect to ${url}: ${connectionFailureOf(cause)}`, { cause });
    this.name = 'GreenlightConnectionError';
    this.url = url;
  }
}

/** What the network said, in words: Node's fetch hides it under `cause` (an AggregateError when several addresses were tried). */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'the connection closed before an answer came',
};

interface NetworkFailure {
  code?: string;
  message?: string;
  cause?: NetworkFailure;
  errors?: NetworkFailure[];
}

function connectionFailureOf(error: unknown): string {
  const failure = error as NetworkFailure | undefined;
  const cause = failure?.cause ?? failure;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  const known = code === undefined ? undefined : CONNECTION_FAILURES[code];
  if (known) return known;
  return code ?? cause?.message ?? String(error);
}

/** The problem an error body holds, or one made from the status when it is not JSON (a proxy's page). */
export function problemFrom(body: unknown, response: Response): Problem {
  if (body && typeof body === 'object') return body as Problem;
  const text = typeof body === 'string' ? body : '';
  return { type: 'about:blank', title: response.statusText || `HTTP ${response.status}`, status: response.status, detail: text.slice(0, 500) };
}

/** Reads the problem of an answer fetched without openapi-fetch (uploads, downloads, events). */
export async function problemOf(response: Response): Promise<Problem> {
  const text = await response.text().catch(() => '');
  try {
    return problemFrom(JSON.parse(text), response);
  } catch {
    return problemFrom(text, response);
  }
}
