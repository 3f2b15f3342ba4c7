import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.js';
import { GreenlightConnectionError, GreenlightError, GreenlightUnavailableError, problemFrom, problemOf, type Problem } from './errors.js';
import { streamEvents, type EventsOptions, type GreenlightEvent } from './events.js';
import { Backoff, retryAfterHeaderMs, sleep, type RetryInfo, type RetryReason } from './retry.js';
import { type ReceiptClaims, verifyReceipt } from './receipts.js';

type Schemas = components['schemas'];
export type Review = Schemas['Review'];
export type ReviewInput = Omit<Schemas['ReviewCreate'], 'blocking'>;
export type Decision = Schemas['Decision'];
export type DecisionInput = Schemas['DecisionCreate'];
export type VoteRecorded = Schemas['VoteRecorded'];
export type Feedback = Schemas['Feedback'];
export type FeedbackInput = Schemas['FeedbackCreate'];
export type Attachment = Schemas['Attachment'];
export type ReviewQuery = NonNullable<operations['listReviews']['parameters']['query']>;

export interface GreenlightClientOptions {
  /** The API, e.g. `http://127.0.0.1:8000`, or the dashboard's `http://localhost:8501/api`. */
  baseUrl: string;
  /** An API key (`Authorization: Bearer …`): the self-hosted `api_key`, or a hosted agent key. */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
}

/**
 * A file filed with a review, for the person deciding to see: `data` (bytes, text or a Blob) or
 * `path` (a file to read; Node).
 */
export interface AttachmentInput {
  /** The name the reviewer sees; defaults to the path's last segment, or the File's name. */
  name?: string;
  /** e.g. `image/png`; defaults to the Blob's type, else `application/octet-stream`. */
  contentType?: string;
  data?: Blob | Uint8Array | string;
  path?: string;
}

export interface RequestReviewOptions {
  /**
   * How long to wait for the decision, in seconds; `true` (the default) waits until a person
   * decides or `signal` aborts; `false` or 0 files the review and returns it, pending.
   */
  wait?: number | boolean;
  signal?: AbortSignal;
  /** Reuse a key to re-attach to the review an earlier call (or process) filed; default: a new one. */
  idempotencyKey?: string;
  onRetry?: (info: RetryInfo) => void;
  /**
   * Files filed with the review, stored with it in one transaction (a multipart create): the
   * reviewer never sees the review without them. The returned review lists them (`attachments`).
   */
  attachments?: AttachmentInput[];
}

export interface UploadOptions {
  /** Defaults to the path's last segment, or the File's name. */
  fileName?: string;
  description?: string;
  signal?: AbortSignal;
}

/**
 * The longest one blocking request asks the server to hold it. Node's fetch gives up on an
 * answer after 300 s; asking for less keeps every wait a clean 408 and re-attach.
 */
const LONGEST_SINGLE_WAIT_SECONDS = 240;

/** How long past the wait it asked for an answer may take before the connection counts as dead. */
const ANSWER_MARGIN_SECONDS = 30;

/** Where a wait stands: what the answers so far said. */
interface WaitState {
  reviewId: number | undefined;
  /** The server's `blocking_timeout_seconds`, as its `Preference-Applied` answered it. */
  longestServerWait: number | undefined;
  lastError: unknown;
  /** The attachments filed with the review, as the first answer that named them listed them. */
  attachments: Attachment[] | undefined;
}

/** The decided (or unwaited-for) review, or why and after how long to ask again. */
type Step = { review: Review } | { reason: RetryReason; retryAfterMs: number | undefined };

function secondsUntil(deadline: number): number {
  const remaining = Math.ceil((deadline - Date.now()) / 1000);
  return Math.max(1, Math.min(remaining, LONGEST_SINGLE_WAIT_SECONDS));
}

/** The caller's signal, also ending the one request after `seconds` (a server that took the connection but never answers). */
function withTimeout(signal: AbortSignal | undefined, seconds: number): AbortSignal {
  const timeout = AbortSignal.timeout(seconds * 1000);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** A random key; `crypto.randomUUID` exists only in secure contexts (not a page on plain http). */
function newIdempotencyKey(): string {
  if (typeof globalThis.crypto.randomUUID === 'function') return globalThis.crypto.randomUUID();
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Answers that mean "ask again, the same way": nothing was lost, and the key re-attaches. */
const RETRIED_STATUSES: ReadonlyMap<number, RetryReason> = new Map([
  [408, 'timeout'],
  [409, 'busy'],
  [429, 'busy'],
  [502, 'unavailable'],
  [503, 'unavailable'],
  [504, 'unavailable'],
  [507, 'busy'],
]);

function isDecided(review: Review): boolean {
  return review.status !== 'pending';
}

function deadlineOf(wait: RequestReviewOptions['wait']): number {
  if (wait === undefined || wait === true) return Number.POSITIVE_INFINITY;
  if (wait === false) return 0;
  if (!Number.isFinite(wait) || wait < 0) throw new RangeError(`wait must be a number of seconds, true or false, not ${wait}`);
  return Date.now() + wait * 1000;
}

function reviewIdIn(problem: Problem): number | undefined {
  return typeof problem.review_id === 'number' ? problem.review_id : undefined;
}

/**
 * A Greenlight API client: every operation typed from the server's OpenAPI document (`api`),
 * and the calls an agent makes, with what the wire does not say: retries that can never file
 * a review twice, and waits that outlive timeouts, restarts and dropped connections.
 */
export class GreenlightClient {
  /** Every operation of `/openapi.json`, typed (openapi-fetch): `api.GET('/reviews', …)`. */
  readonly api: Client<paths>;
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: typeof globalThis.fetch;

  constructor(options: GreenlightClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.headers = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {};
    const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.fetch = async (input, init) => {
      try {
        return await send(input, init);
      } catch (error) {
        // An abort (the caller's, or a timeout the client set) is passed on as it is.
        const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
        if (signal?.aborted) throw error;
        throw new GreenlightConnectionError(this.baseUrl, error);
      }
    };
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers, fetch: (request) => this.fetch(request) });
  }

  /**
   * Checks a decided review's receipt against this server's public keys (fetched once through
   * this client, again after a rotation) and the action about to run: the proposed action when
   * approved, the modified one when modified. Throws `ReceiptError` when the action must not run.
   */
  verifyReceipt(review: Pick<Review, 'id' | 'decision'>, action: string): Promise<ReceiptClaims> {
    return verifyReceipt(review.decision?.receipt, action, { serverUrl: this.baseUrl, fetch: this.fetch, reviewId: review.id });
  }

  /**
   * Files a review and waits for a person's decision. Every attempt carries the same
   * `Idempotency-Key`, so a 408, a 503 from a stopping server, or a dropped connection only
   * re-attaches to the one review. Returns the decided review, or, once `wait` has passed,
   * the review as it stands (still `pending`).
   */
  async requestReview(input: ReviewInput, options: RequestReviewOptions = {}): Promise<Review> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    const deadline = deadlineOf(options.wait);
    const blocking = deadline > Date.now();
    const files = options.attachments && (await filesOf(options.attachments));
    const body = { ...input, blocking };
    const backoff = new Backoff();
    const wait: WaitState = { reviewId: undefined, longestServerWait: undefined, lastError: undefined, attachments: undefined };
    for (let attempt = 1; ; attempt++) {
      let step: Step;
      try {
        // Once the review and the server's longest wait are known, the wait goes on with
        // long-polls on the review itself: the key is kept only 24 hours, a review can wait longer.
        step =
          wait.reviewId !== undefined && wait.longestServerWait !== undefined
            ? await this.pollDecision(wait.reviewId, Math.min(wait.longestServerWait, secondsUntil(deadline)), wait, options.signal)
            : await this.postReview(body, files, idempotencyKey, blocking ? secondsUntil(deadline) : undefined, wait, options.signal);
      } catch (error) {
        if (options.signal?.aborted || error instanceof GreenlightError) throw error;
        wait.lastError = error;
        step = { reason: 'connection', retryAfterMs: undefined };
      }
      if ('review' in step) return withAttachments(step.review, wait);
      if (step.retryAfterMs === undefined && step.reason !== 'timeout') {
        step.retryAfterMs = backoff.next();
      } else {
        backoff.reset();
      }
      const delayMs = step.retryAfterMs ?? 0;
      if (Date.now() + delayMs >= deadline) return withAttachments(await this.pendingAtDeadline(wait, options.signal), wait);
      options.onRetry?.({ reason: step.reason, attempt, delayMs, reviewId: wait.reviewId });
      await sleep(delayMs, options.signal);
    }
  }

  /**
   * One `POST /reviews`, without retries; `idempotencyKey` makes a retry of your own safe, and
   * `attachments` are stored with the review (listed in the answer).
   */
  async createReview(input: ReviewInput, options: { idempotencyKey?: string; signal?: AbortSignal; attachments?: AttachmentInput[] } = {}): Promise<Review> {
    const headers = options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};
    const signal = withTimeout(options.signal, ANSWER_MARGIN_SECONDS);
    const files = options.attachments && (await filesOf(options.attachments));
    const body = { ...input, blocking: false };
    return this.expect(await this.api.POST('/reviews', { body, bodySerializer: serializerFor(files), headers, signal }));
  }

  async getReview(reviewId: number, signal?: AbortSignal): Promise<Review> {
    return this.expect(await this.api.GET('/reviews/{review_id}', { params: { path: { review_id: reviewId } }, signal }));
  }

  async listReviews(query: ReviewQuery = {}, signal?: AbortSignal): Promise<Schemas['ReviewList']> {
    return this.expect(await this.api.GET('/reviews', { params: { query }, signal }));
  }

  /** The decision, or `null` while pending; `wait` long-polls up to that many seconds. */
  async getDecision(reviewId: number, options: { wait?: number; signal?: AbortSignal } = {}): Promise<Decision | null> {
    const query = options.wait ? { wait: options.wait } : {};
    const result = await this.api.GET('/reviews/{review_id}/decision', { params: { path: { review_id: reviewId }, query }, signal: options.signal });
    return this.expect(result) as Decision | null;
  }

  /**
   * Decides a review. Answers the decision, or, for a vote that does not finish a hosted
   * workflow, the vote recorded (202). A review already decided throws a 409 GreenlightError
   * whose problem carries the decision that stands.
   */
  async decide(reviewId: number, decision: DecisionInput, signal?: AbortSignal): Promise<Decision | VoteRecorded> {
    const result = await this.api.POST('/reviews/{review_id}/decide', { params: { path: { review_id: reviewId } }, body: decision, signal });
    return this.expect(result) as Decision | VoteRecorded;
  }

  async feedback(reviewId: number, feedback: FeedbackInput, signal?: AbortSignal): Promise<Feedback> {
    return this.expect(await this.api.POST('/reviews/{review_id}/feedback', { params: { path: { review_id: reviewId } }, body: feedback, signal }));
  }

  async listFeedback(reviewId: number, signal?: AbortSignal): Promise<Schemas['FeedbackList']> {
    return this.expect(await this.api.GET('/reviews/{review_id}/feedback', { params: { path: { review_id: reviewId } }, signal }));
  }

  /** Attaches a file: a path (Node; streamed from disk) or a Blob / File (Node and browsers). */
  async uploadAttachment(reviewId: number, file: string | Blob, options: UploadOptions = {}): Promise<Attachment> {
    const { blob, name } = await blobOf(file, options.fileName);
    const form = new FormData();
    if (options.description !== undefined) form.append('description', options.description);
    form.append('file', blob, name);
    const response = await this.fetch(`${this.baseUrl}/reviews/${reviewId}/attachments`, {
      method: 'POST',
      headers: this.headers,
      body: form,
      signal: options.signal,
    });
    if (!response.ok) throw new GreenlightError(response.status, await problemOf(response));
    return (await response.json()) as Attachment;
  }

  async listAttachments(reviewId: number, signal?: AbortSignal): Promise<Schemas['AttachmentList']> {
    return this.expect(await this.api.GET('/reviews/{review_id}/attachments', { params: { path: { review_id: reviewId } }, signal }));
  }

  /** The attachment's bytes, checked against nothing: compare `sha256` from its record if it matters. */
  async downloadAttachment(attachmentId: number, signal?: AbortSignal): Promise<Blob> {
    const response = await this.fetch(`${this.baseUrl}/attachments/${attachmentId}/download`, { headers: this.headers, signal });
    if (!response.ok) throw new GreenlightError(response.status, await problemOf(response));
    return response.blob();
  }

  /**
   * The live events (`GET /events`) as an async iterator. A dropped stream reconnects with
   * `Last-Event-ID`, so nothing in between is missed; `break` or `signal` ends it.
   */
  events(options: EventsOptions = {}): AsyncGenerator<GreenlightEvent> {
    return streamEvents({ url: `${this.baseUrl}/events`, headers: this.headers, fetch: this.fetch }, options);
  }

  /** A blocking create (or, without `waitSeconds`, a plain one) with the request's key, and its files when it has some. */
  private async postReview(
    body: ReviewInput & { blocking: boolean },
    files: NamedBlob[] | undefined,
    idempotencyKey: string,
    waitSeconds: number | undefined,
    wait: WaitState,
    signal: AbortSignal | undefined,
  ): Promise<Step> {
    const headers: Record<string, string> = { 'Idempotency-Key': idempotencyKey };
    if (waitSeconds !== undefined) headers.Prefer = `wait=${waitSeconds}`;
    const attemptSignal = withTimeout(signal, (waitSeconds ?? 0) + ANSWER_MARGIN_SECONDS);
    const { data: review, error, response } = await this.api.POST('/reviews', { body, bodySerializer: serializerFor(files), headers, signal: attemptSignal });
    const applied = /wait=(\d+)/.exec(response.headers.get('preference-applied') ?? '')?.[1];
    if (applied) wait.longestServerWait = Number(applied);
    // A 408's problem carries the review as it stands, its attachments with it.
    wait.attachments ??= (review ?? (error as { review?: Review } | undefined)?.review)?.attachments;
    if (review) {
      if (waitSeconds === undefined || isDecided(review)) return { review };
      wait.reviewId = review.id;
      return { reason: 'timeout', retryAfterMs: 0 };
    }
    return this.retryableProblem(response, problemFrom(error, response), wait);
  }

  /** A long-poll on the review's decision; the decided review when one came. */
  private async pollDecision(reviewId: number, waitSeconds: number, wait: WaitState, signal: AbortSignal | undefined): Promise<Step> {
    const attemptSignal = withTimeout(signal, waitSeconds + ANSWER_MARGIN_SECONDS);
    const { data: decision, error, response } = await this.api.GET('/reviews/{review_id}/decision', {
      params: { path: { review_id: reviewId }, query: { wait: waitSeconds } },
      signal: attemptSignal,
    });
    if (response.ok) return decision ? { review: await this.getReview(reviewId, withTimeout(signal, ANSWER_MARGIN_SECONDS)) } : { reason: 'timeout', retryAfterMs: 0 };
    return this.retryableProblem(response, problemFrom(error, response), wait);
  }

  private retryableProblem(response: Response, problem: Problem, wait: WaitState): Step {
    const reason = RETRIED_STATUSES.get(response.status);
    if (!reason) throw new GreenlightError(response.status, problem);
    wait.reviewId = reviewIdIn(problem) ?? wait.reviewId;
    wait.lastError = new GreenlightError(response.status, problem);
    return { reason, retryAfterMs: reason === 'timeout' ? 0 : retryAfterHeaderMs(response) };
  }

  private async pendingAtDeadline(wait: WaitState, signal: AbortSignal | undefined): Promise<Review> {
    if (wait.reviewId === undefined) {
      const why = wait.lastError instanceof Error ? `: ${wait.lastError.message}` : '';
      throw new GreenlightUnavailableError(`Greenlight did not take the review before the deadline${why}`, { cause: wait.lastError });
    }
    try {
      return await this.getReview(wait.reviewId, withTimeout(signal, ANSWER_MARGIN_SECONDS));
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new GreenlightUnavailableError(`Greenlight could not be reached at the deadline; review ${wait.reviewId} is filed`, { cause: error });
    }
  }

  private expect<T>(result: { data?: T; error?: unknown; response: Response }): T {
    if (result.response.ok) return result.data as T;
    throw new GreenlightError(result.response.status, problemFrom(result.error, result.response));
  }
}

interface NamedBlob {
  blob: Blob;
  name: string;
}

/** Reads each attachment (a path is opened, not loaded) once, for every attempt to send. */
async function filesOf(attachments: AttachmentInput[]): Promise<NamedBlob[]> {
  return Promise.all(
    attachments.map(async (attachment, index) => {
      const { data, path, contentType } = attachment;
      if ((data === undefined) === (path === undefined)) throw new TypeError(`attachments[${index}]: give data or path, one of them`);
      // Text given as a string is text; bytes say nothing of their type.
      const source = path ?? (data instanceof Blob ? data : typeof data === 'string' ? new Blob([data], { type: 'text/plain' }) : new Blob([new Uint8Array(data as Uint8Array)]));
      const { blob, name } = await blobOf(source, attachment.name);
      const type = contentType ?? blob.type;
      return { blob: type && type !== blob.type ? new Blob([blob], { type }) : blob, name };
    }),
  );
}

/**
 * How `POST /reviews` sends its body: JSON, or, with files, `multipart/form-data` with the
 * review's JSON in the part `review` and each file in a part `file`. A new form per attempt.
 */
function serializerFor(files: NamedBlob[] | undefined): ((body: unknown) => string | FormData) | undefined {
  if (!files) return undefined;
  return (body) => {
    const form = new FormData();
    form.append('review', JSON.stringify(body));
    for (const { blob, name } of files) form.append('file', blob, name);
    return form;
  };
}

/** The review with the attachments it was filed with, when the answer that ended the wait (a read of the review) did not list them. */
function withAttachments(review: Review, wait: WaitState): Review {
  return review.attachments || !wait.attachments ? review : { ...review, attachments: wait.attachments };
}

async function blobOf(file: string | Blob, fileName: string | undefined): Promise<{ blob: Blob; name: string }> {
  if (typeof file !== 'string') {
    return { blob: file, name: fileName ?? ('name' in file && typeof file.name === 'string' ? file.name : 'attachment') };
  }
  // Loaded only for a path, so the client stays usable in a browser.
  const [{ openAsBlob }, { basename }] = await Promise.all([import('node:fs'), import('node:path')]);
  return { blob: await openAsBlob(file), name: fileName ?? basename(file) };
}
