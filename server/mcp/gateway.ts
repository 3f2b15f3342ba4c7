import type { AttachmentService, WholeFile } from '../domain/reviews/attachments';
import type { FeedbackService } from '../domain/reviews/feedback';
import type { Principal } from '../domain/shared/principal';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import type { FeedbackInput, FeedbackRecord, ReviewFilters, ReviewInput, ReviewPage, ReviewRecord } from '../domain/reviews/records';

export type DecisionWait =
  | { kind: 'decided'; review: ReviewRecord }
  /** The time ran out or the caller gave up; the review stays pending. */
  | { kind: 'still_pending' }
  /** The API stopped answering (shutdown, lost connection); the review stays pending. */
  | { kind: 'unavailable'; reason: string };

/**
 * What the MCP tools need from Greenlight. Two implementations: the services of an API in
 * this process (`/mcp`, or `greenlight mcp` when it had to start its own), and the REST
 * API of a Greenlight running elsewhere (`greenlight mcp` next to `greenlight start`).
 */
export interface ReviewGateway {
  /** Files the review, with `files` as its attachments stored in the same transaction. */
  create(input: ReviewInput, files?: readonly WholeFile[]): Promise<ReviewRecord>;
  get(reviewId: number): Promise<ReviewRecord>;
  /** Resolves when the review is decided, `timeoutMs` passes, or `signal` aborts. Never polls. */
  waitForDecision(reviewId: number, timeoutMs: number, signal: AbortSignal): Promise<DecisionWait>;
  addFeedback(reviewId: number, input: FeedbackInput): Promise<FeedbackRecord>;
  listPending(filters: Pick<ReviewFilters, 'task_type' | 'urgency' | 'framework'>, page: number, pageSize: number): Promise<ReviewPage>;
}

/** The gateway over an API in this process, acting for `principal`: the same use cases the HTTP routes call. */
export function localGateway(
  services: { reviews: ReviewUseCases; feedback: FeedbackService; attachments: Pick<AttachmentService, 'hold'> },
  principal: Principal,
): ReviewGateway {
  const { reviews, feedback, attachments } = services;
  const { scope } = principal;
  return {
    async create(input, files = []) {
      const uploads = files.length > 0 ? await attachments.hold(files) : [];
      const outcome = await reviews.submitting.submit(principal, input, { uploads });
      if (outcome.kind !== 'stored') throw new Error(`a review submitted without waiting came back ${outcome.kind}`);
      return outcome.review;
    },
    get: (reviewId) => reviews.reading.get(scope, reviewId),
    async waitForDecision(reviewId, timeoutMs, signal) {
      // The same room as the API's blocking creates and long-polls: every wait holds memory until its decision.
      if (reviews.waiting.roomFull()) {
        return { kind: 'unavailable', reason: 'Greenlight already holds max_waiting_requests waiting requests' };
      }
      const outcome = await reviews.waiting.wait(scope, reviewId, timeoutMs, signal);
      if (outcome.kind === 'decided') return outcome;
      if (outcome.kind === 'shutdown') return { kind: 'unavailable', reason: 'Greenlight is shutting down' };
      return { kind: 'still_pending' };
    },
    addFeedback: (reviewId, input) => feedback.add(principal, reviewId, input),
    listPending: (filters, page, pageSize) => reviews.reading.list(scope, { ...filters, status: 'pending' }, page, pageSize, 'priority'),
  };
}
