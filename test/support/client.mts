import type { RetryInfo } from '@greenlight/client';
import { call } from './server.js';

/** The retries a client reported, as events a test can wait for instead of waiting for time. */
export class RetryLog {
  readonly retries: RetryInfo[] = [];
  private waiters: Array<{ test: () => boolean; resolve: () => void }> = [];

  readonly record = (info: RetryInfo): void => {
    this.retries.push(info);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.test()) return true;
      waiter.resolve();
      return false;
    });
  };

  count(reason: RetryInfo['reason']): number {
    return this.retries.filter((retry) => retry.reason === reason).length;
  }

  /** Resolves once `count` retries for `reason` have been reported in all. */
  reached(reason: RetryInfo['reason'], count: number): Promise<void> {
    const test = (): boolean => this.count(reason) >= count;
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }
}

/** Resolves with the id of the first pending review of `taskType` once the server holds one. */
export async function pendingReviewOf(baseUrl: string, taskType: string): Promise<number> {
  for (;;) {
    const { body } = await call(baseUrl, 'GET', `/reviews?status=pending&task_type=${encodeURIComponent(taskType)}`);
    if (body.reviews.length > 0) return body.reviews[0].id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function decide(baseUrl: string, reviewId: number, decision: Record<string, unknown>): Promise<void> {
  const { status, body } = await call(baseUrl, 'POST', `/reviews/${reviewId}/decide`, { reviewer_name: 'dana', ...decision });
  if (status !== 200) throw new Error(`decide answered ${status}: ${JSON.stringify(body)}`);
}
