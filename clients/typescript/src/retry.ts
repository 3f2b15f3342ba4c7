/** Why the client asks again: the answer that made it, for `onRetry` and for tests that wait on it. */
export type RetryReason =
  /** 408: the server's longest wait passed; the review stays pending and the next request re-attaches to it. */
  | 'timeout'
  /** 503, 502 or 504: the server is stopping, full of waiters, or behind a proxy that lost it. */
  | 'unavailable'
  /** 409 while the first request with this key is being stored, 429, or 507 (a full disk stores nothing). */
  | 'busy'
  /** No answer at all: refused, reset, or dropped while waiting. */
  | 'connection';

export interface RetryInfo {
  reason: RetryReason;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** The review, once any answer named it. */
  reviewId: number | undefined;
}

const FIRST_BACKOFF_MS = 200;
const LONGEST_BACKOFF_MS = 5_000;

/** Doubling delays for failures that say nothing of when to come back; reset by a wait that went as asked. */
export class Backoff {
  private nextMs = FIRST_BACKOFF_MS;

  next(): number {
    const delay = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, LONGEST_BACKOFF_MS);
    return delay;
  }

  reset(): void {
    this.nextMs = FIRST_BACKOFF_MS;
  }
}

/** `Retry-After` in milliseconds (seconds or an HTTP date); undefined when the answer has none. */
export function retryAfterHeaderMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
