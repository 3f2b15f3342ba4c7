import type { DecisionRecord, FeedbackRecord, ReviewPage, ReviewRecord } from '../domain/reviews/records';
import type { DecisionWait, ReviewGateway } from './gateway';

export interface ApiGatewayOptions {
  /** e.g. `http://127.0.0.1:8000` */
  apiUrl: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey?: string;
  /**
   * Longest single long-poll of `GET /reviews/{id}/decision?wait=N`; the API refuses waits
   * past its `blocking_timeout_seconds`, so a longer wait is made of several.
   */
  longPollSeconds: number;
}

/** An answer of the API that was not a success: its problem document's detail, or the status line. */
export class ApiRequestError extends Error {
  constructor(readonly status: number, detail: string) {
    super(detail);
    this.name = 'ApiRequestError';
  }
}

/** The API could not be reached at all (refused, reset, DNS). */
export class ApiUnreachableError extends Error {
  constructor(readonly apiUrl: string, cause: unknown) {
    super(`the Greenlight API at ${apiUrl} cannot be reached (${describeCause(cause)})`);
    this.name = 'ApiUnreachableError';
  }
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** The gateway over the REST API of a Greenlight running elsewhere (usually `greenlight start`). */
export function apiGateway(options: ApiGatewayOptions): ReviewGateway {
  const base = options.apiUrl.replace(/\/+$/, '');

  /** One request; a FormData body goes as multipart/form-data, anything else as JSON. */
  async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const form = body instanceof FormData;
    if (body !== undefined && !form) headers['content-type'] = 'application/json';
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : form ? body : JSON.stringify(body), signal });
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new ApiUnreachableError(base, error);
    }
    const text = await response.text();
    if (!response.ok) {
      let detail = `${response.status} ${response.statusText}`;
      try {
        detail = (JSON.parse(text) as { detail?: string }).detail ?? detail;
      } catch {
        // Not a problem document (a proxy's error page): the status line says enough.
      }
      throw new ApiRequestError(response.status, detail);
    }
    return JSON.parse(text) as T;
  }

  async function waitForDecision(reviewId: number, timeoutMs: number, signal: AbortSignal): Promise<DecisionWait> {
    const deadline = Date.now() + timeoutMs;
    try {
      for (let remainingMs = timeoutMs; remainingMs >= 1000; remainingMs = deadline - Date.now()) {
        const waitSeconds = Math.min(Math.floor(remainingMs / 1000), options.longPollSeconds);
        // Each long-poll is answered the moment the decision commits (the API pushes; nothing polls).
        const decision = await request<DecisionRecord | null>('GET', `/reviews/${reviewId}/decision?wait=${waitSeconds}`, undefined, signal);
        if (decision) return { kind: 'decided', review: await request<ReviewRecord>('GET', `/reviews/${reviewId}`) };
      }
      return { kind: 'still_pending' };
    } catch (error) {
      if (isAbort(error)) return { kind: 'still_pending' };
      if (error instanceof ApiUnreachableError || (error instanceof ApiRequestError && error.status === 503)) {
        return { kind: 'unavailable', reason: error.message };
      }
      throw error;
    }
  }

  return {
    create(input, files = []) {
      const review = { ...input, blocking: false };
      if (files.length === 0) return request<ReviewRecord>('POST', '/reviews', review);
      // The review and its files in one request, stored together (see POST /reviews).
      const form = new FormData();
      form.append('review', JSON.stringify(review));
      for (const file of files) form.append('file', new Blob([new Uint8Array(file.data)], { type: file.contentType ?? '' }), file.name);
      return request<ReviewRecord>('POST', '/reviews', form);
    },
    get: (reviewId) => request<ReviewRecord>('GET', `/reviews/${reviewId}`),
    waitForDecision,
    addFeedback: (reviewId, input) => request<FeedbackRecord>('POST', `/reviews/${reviewId}/feedback`, input),
    listPending(filters, page, pageSize) {
      const query = new URLSearchParams({ status: 'pending', sort: 'priority', page: String(page), page_size: String(pageSize) });
      for (const [key, value] of Object.entries(filters)) if (value !== undefined) query.set(key, value);
      return request<ReviewPage>('GET', `/reviews?${query}`);
    },
  };
}

/** Whether a Greenlight API answers at `apiUrl` (its `/health` needs no key). */
export async function greenlightAnswers(apiUrl: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const response = await fetch(`${apiUrl.replace(/\/+$/, '')}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { service?: string };
    return body.service === 'greenlight';
  } catch {
    return false;
  }
}
