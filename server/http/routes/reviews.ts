import type { IRouter, Request, Response } from 'express';
import { type AttachmentService, normalizeContentType, type Upload } from '../../domain/reviews/attachments';
import { AppError, invalidInput } from '../../domain/shared/errors';
import type { Scope } from '../../domain/shared/principal';
import type { DecisionInput, DecisionRecord, ReviewFilters, ReviewInput, ReviewOrder, ReviewRecord } from '../../domain/reviews/records';
import type { SubmitOutcome } from '../../domain/reviews/submitting';
import type { ReviewUseCases } from '../../domain/reviews/use-cases';
import type { WaitOutcome } from '../../domain/reviews/waiters';
import type { AttachmentFiles } from '../../storage/attachment-files';
import { sendProblem } from '../problems';
import { principalOf } from '../auth';
import { idempotencyOf } from '../idempotency';
import { checkJsonShape } from '../limits';
import { MULTIPART_OVERHEAD_BYTES, receiveParts, refuseAnnouncedOver } from '../multipart';
import { validateRequest } from '../openapi/validation';
import { integerOf, pathInteger, queryInteger } from '../params';
import { clientGoneSignal, preferredWaitSeconds } from '../waiting';

export interface ReviewRoutesOptions {
  reviews: ReviewUseCases;
  blockingTimeoutSeconds: number;
  /** A review filed with files (multipart) stores them as its attachments, under these limits. */
  attachments: AttachmentService;
  /** Where the files stream to while they arrive. */
  files: AttachmentFiles;
}

type CreateBody = ReviewInput & { blocking?: boolean };

/** The `review` part of a multipart create: as large as a JSON create's whole body may be. */
const MAX_REVIEW_PART_CHARACTERS = 1024 * 1024;

/** A create with its files: the review's fields, and the files to be stored as its attachments. */
interface CreateRequest {
  body: CreateBody;
  uploads: Upload[];
}

/** How a create was asked for, as its answer needs it. */
interface CreateAsked {
  multipart: boolean;
  waitSeconds: number;
  /** `Prefer: wait=N` set the wait: the answer says it was applied. */
  waitPreferred: boolean;
}

function isMultipart(req: Request): boolean {
  return req.is('multipart/form-data') === 'multipart/form-data';
}

/**
 * Reads a multipart create: the review's JSON in the part `review`, checked as a JSON create's
 * body is, and each file part `file` streamed to a holding file. Refused, nothing is kept.
 */
async function receiveCreate(req: Request, res: Response, attachments: AttachmentService, files: AttachmentFiles): Promise<CreateRequest> {
  const { maxBytes, maxPerReview } = attachments.limits;
  refuseAnnouncedOver(
    req,
    maxPerReview * (maxBytes + MULTIPART_OVERHEAD_BYTES) + MAX_REVIEW_PART_CHARACTERS * 4,
    `the request is larger than ${maxPerReview} files of max_attachment_bytes (${maxBytes} bytes) and the review`,
  );
  const parts = await receiveParts(req, {
    files,
    fileField: 'file',
    maxBytes,
    maxFiles: maxPerReview,
    tooManyFiles: () => attachments.tooManyFiles(),
    textFields: { review: { maxLength: MAX_REVIEW_PART_CHARACTERS, tooLongStatus: 413 } },
  });
  const uploads = parts.files.map(({ incoming, fileName, contentType }) => ({ incoming, fileName, contentType: normalizeContentType(contentType), description: null }));
  try {
    req.body = { review: reviewPart(parts.fields.review) };
    await validateRequest(req, res);
    return { body: (req.body as { review: CreateBody }).review, uploads };
  } catch (error) {
    await attachments.discard(uploads);
    throw error;
  }
}

function reviewPart(text: string | undefined): unknown {
  if (text === undefined) throw invalidInput('review', 'is required: send the review\'s fields as JSON in a multipart part named "review"');
  let review: unknown;
  try {
    review = JSON.parse(text);
  } catch (error) {
    throw invalidInput('review', `is not valid JSON: ${(error as Error).message}`);
  }
  if (review === null || typeof review !== 'object' || Array.isArray(review)) throw invalidInput('review', 'must be a JSON object of the review\'s fields');
  checkJsonShape(review);
  return review;
}

const FILTERS = ['status', 'task_type', 'urgency', 'framework', 'agent_id', 'organization_id', 'assigned_to', 'q'] as const;
const NUMERIC_FILTERS = new Set<string>(['agent_id', 'organization_id']);

function reviewIdOf(req: Request): number {
  return pathInteger(req, 'review_id');
}

function filtersOf(req: Request): ReviewFilters {
  const filters: Record<string, string | number> = {};
  for (const name of FILTERS) {
    // The validator has already coerced integer parameters to numbers; the rest stay text.
    const value = req.query[name] as unknown;
    if (typeof value === 'string' || typeof value === 'number') filters[name] = NUMERIC_FILTERS.has(name) ? integerOf(value, name) : value;
  }
  return { ...filters, ...booleanFilter(req, 'decided'), ...booleanFilter(req, 'waiting') } as ReviewFilters;
}

function booleanFilter(req: Request, name: 'decided' | 'waiting'): Partial<Record<typeof name, boolean>> {
  // The validator has checked it is a boolean; depending on the parser it arrives as one or as text.
  const value = req.query[name] as unknown;
  return value === undefined ? {} : { [name]: String(value) === 'true' };
}

/**
 * Registers the review endpoints on `routes`, the app itself rather than a router of their own:
 * a request held inside a mounted router keeps that router's dispatch state (its `next`, and
 * what restores the outer router's, about 0.7 KB) for as long as it is held, and thousands of
 * agents may hold a blocking create or a long-poll open for an hour.
 */
export function reviewRoutes(routes: IRouter, { reviews, blockingTimeoutSeconds, attachments, files }: ReviewRoutesOptions): void {

  /** A create that carried files answers with the review's attachments listed. */
  async function withAttachments(scope: Scope, review: ReviewRecord, listed: boolean): Promise<ReviewRecord> {
    return listed ? { ...review, attachments: (await attachments.list(scope, review.id)).attachments } : review;
  }

  /**
   * @openapi
   * /reviews:
   *   post:
   *     operationId: createReview
   *     tags: [reviews]
   *     summary: Submit an action for human review
   *     description: >-
   *       Creates a pending review. With `blocking: true` the request stays open until a person
   *       decides and then answers 201 with the `decision` included; the wait ends after
   *       `blocking_timeout_seconds`, or sooner with `Prefer: wait=N`, with a 408 that carries
   *       the `review_id`. Without `blocking` it answers at once with `decision: null`.
   *
   *       To file the review with files (screenshots, a diff, the file an action changes), send
   *       `multipart/form-data`: the review's fields as JSON in the part `review` (with `blocking`
   *       as in a JSON create) and each file in a part `file`. The review and its attachments are
   *       stored in one transaction — a reviewer never sees the review without them — or, when
   *       any part is refused, nothing is: a file past `max_attachment_bytes` or more files than
   *       `max_attachments_per_review` is 413, a `review` part that is missing, not JSON or not a
   *       valid ReviewCreate is 400 (fields named `review.<field>`). The answer, 201 or a 408's
   *       `review`, lists them in `attachments`. An `Idempotency-Key` covers the files too: a
   *       repeat with the same review and files re-attaches, with other files it is a 422.
   *     parameters:
   *       - name: Prefer
   *         in: header
   *         required: false
   *         description: '`wait=N` caps a blocking wait at N seconds (RFC 7240).'
   *         schema: { type: string, example: wait=30 }
   *       - name: Idempotency-Key
   *         in: header
   *         required: false
   *         description: >-
   *           Makes a retry safe: a repeat with the same key and the same body answers with the
   *           review the key first made (as it is now, with `Idempotent-Replayed: true`), and a
   *           blocking repeat waits on that review. Keys are kept 24 hours, per API key.
   *         schema: { type: string, minLength: 1, maxLength: 255, pattern: '^[!-~]+$', example: 7f3c2a90-refund-1042 }
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/ReviewCreate' }
   *         multipart/form-data:
   *           schema: { $ref: '#/components/schemas/ReviewCreateWithFiles' }
   *           encoding:
   *             review: { contentType: application/json }
   *             file: { contentType: application/octet-stream }
   *     responses:
   *       '201':
   *         description: Created (and, when blocking, decided).
   *         headers:
   *           Location: { schema: { type: string }, description: URL of the new review }
   *           Idempotent-Replayed: { schema: { type: string, enum: ['true'] }, description: 'The review an earlier request with this Idempotency-Key made' }
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Review' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '408':
   *         description: A blocking create waited past its limit; the review stays pending.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/WaitProblem' }
   *       '409': { $ref: '#/components/responses/IdempotencyKeyInUse' }
   *       '413':
   *         description: >-
   *           The body is too large; with files, one is larger than `max_attachment_bytes` or there
   *           are more than `max_attachments_per_review`. Nothing is stored.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/Problem' }
   *             example: { type: about:blank, title: Payload Too Large, status: 413, detail: 'a review holds at most 20 attachments (max_attachments_per_review); this request has more' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '422': { $ref: '#/components/responses/IdempotencyKeyReused' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   *       '503': { $ref: '#/components/responses/ServiceUnavailable' }
   */
  routes.post('/reviews', (req: Request<Record<string, string>, unknown, CreateBody>, res) => {
    if (!isMultipart(req)) return createReview(req, res, { body: req.body, uploads: [] }, false);
    return receiveCreate(req, res, attachments, files).then((received) => createReview(req, res, received, true));
  });

  /**
   * A plain function returning its chain, as the route is: an `async` one would wrap the chain
   * in one more promise, held for as long as the agent waits.
   */
  function createReview(req: Request, res: Response, { body, uploads }: CreateRequest, multipart: boolean): Promise<void> {
    const { blocking = false, ...input } = body;
    const preferred = preferredWaitSeconds(req.get('prefer'));
    const waitSeconds = Math.min(preferred ?? blockingTimeoutSeconds, blockingTimeoutSeconds);
    const principal = principalOf(res);
    // What the files were is part of the request a key stands for: the same review with other files is another request.
    const fileDigests = multipart ? uploads.map((upload) => ({ name: upload.fileName ?? null, type: upload.contentType, sha256: upload.incoming.sha256 })) : undefined;
    const submitted = reviews.submitting.submit(principal, input, {
      waitMs: blocking ? waitSeconds * 1000 : undefined,
      signal: blocking ? clientGoneSignal(req, res) : undefined,
      idempotency: idempotencyOf(req, fileDigests),
      uploads,
    });
    // The review's fields are the use case's now; an agent may wait an hour with its request held.
    req.body = undefined;
    // Chained, not awaited: a suspended handler would keep its whole frame while the agent waits.
    return submitted.then((outcome) => answerCreate(res, principal.scope, outcome, { multipart, waitSeconds, waitPreferred: blocking && preferred !== undefined }));
  }

  async function answerCreate(res: Response, scope: Scope, outcome: SubmitOutcome, asked: CreateAsked): Promise<void> {
    if (outcome.kind === 'aborted') return;
    // A replayed blocking create waits on the original review, as the first request did.
    if (outcome.replayed) res.set('Idempotent-Replayed', 'true');
    if (asked.waitPreferred) res.set('Preference-Applied', `wait=${asked.waitSeconds}`);
    const reviewId = outcome.kind === 'shutdown' ? outcome.reviewId : outcome.review.id;
    res.location(`/reviews/${reviewId}`);
    switch (outcome.kind) {
      case 'stored':
      case 'decided':
        res.status(201).json(await withAttachments(scope, outcome.review, asked.multipart));
        return;
      case 'timeout':
        // RFC 9110 asks a 408 to close the connection; it also stops clients from silently resending.
        res.set('Connection', 'close');
        sendProblem(res, 408, `no decision within ${asked.waitSeconds} s; review ${reviewId} stays pending — fetch GET /reviews/${reviewId}/decision later`, {
          review_id: reviewId,
          review: await withAttachments(scope, outcome.review, asked.multipart),
        });
        return;
      case 'shutdown':
        answerShuttingDown(res, reviewId, `review ${reviewId} stays pending — fetch its decision later`);
    }
  }

  /**
   * @openapi
   * /reviews:
   *   get:
   *     operationId: listReviews
   *     tags: [reviews]
   *     summary: List reviews
   *     parameters:
   *       - { name: status, in: query, schema: { $ref: '#/components/schemas/ReviewStatus' } }
   *       - { name: task_type, in: query, allowReserved: true, schema: { type: string, maxLength: 255 } }
   *       - { name: urgency, in: query, schema: { $ref: '#/components/schemas/Urgency' } }
   *       - { name: framework, in: query, allowReserved: true, schema: { type: string, maxLength: 255 } }
   *       - { name: agent_id, in: query, schema: { type: integer, minimum: 1, maximum: 2147483647 } }
   *       - { name: organization_id, in: query, schema: { type: integer, minimum: 1, maximum: 2147483647 } }
   *       - { name: assigned_to, in: query, allowReserved: true, schema: { type: string, maxLength: 255 } }
   *       - name: mine
   *         in: query
   *         description: >-
   *           Hosted edition, a signed-in person: `true` keeps the reviews assigned to them (by their
   *           e-mail) or to a team they are in. 400 for an API key, which stands for no person.
   *         schema: { type: boolean }
   *       - name: decided
   *         in: query
   *         description: '`true`: only decided reviews (any status but pending); `false`: only pending ones.'
   *         schema: { type: boolean }
   *       - name: waiting
   *         in: query
   *         description: >-
   *           `true`: only pending reviews some agent is waiting on right now (their
   *           `waiting_until` is set); `false`: only the others.
   *         schema: { type: boolean }
   *       - name: q
   *         in: query
   *         # Free text: `+` for a space (as form encoding and most HTTP clients write it) is accepted.
   *         allowReserved: true
   *         description: Only reviews whose proposed action contains this text (case-insensitive for ASCII letters).
   *         schema: { type: string, minLength: 1, maxLength: 200 }
   *       - name: sort
   *         in: query
   *         description: >-
   *           `newest` (default) or `oldest` by creation; `priority` is the reviewer's queue — most
   *           urgent first, then oldest first; `recently_decided` puts the latest decisions first;
   *           `waiting_until` puts first the review whose waiting agent gives up soonest, then the
   *           others in `priority` order.
   *         schema: { type: string, enum: [newest, oldest, priority, recently_decided, waiting_until], default: newest }
   *       - { name: page, in: query, schema: { type: integer, minimum: 1, maximum: 1000000, default: 1 } }
   *       - { name: page_size, in: query, schema: { type: integer, minimum: 1, maximum: 100, default: 20 } }
   *     responses:
   *       '200':
   *         description: One page of matching reviews and the total count.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/ReviewList' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  routes.get('/reviews', async (req, res) => {
    const page = queryInteger(req, 'page', 1);
    const pageSize = queryInteger(req, 'page_size', 20);
    const order = (req.query.sort ?? 'newest') as ReviewOrder;
    const principal = principalOf(res);
    // The validator has checked it is a boolean; depending on the parser it arrives as one or as text.
    const mine = String(req.query.mine as unknown) === 'true';
    const filters = mine ? { ...filtersOf(req), assigned_to_any: await reviews.reading.assignmentsOf(principal) } : filtersOf(req);
    res.json(await reviews.reading.list(principal.scope, filters, page, pageSize, order));
  });

  /**
   * @openapi
   * /reviews/{review_id}:
   *   get:
   *     operationId: getReview
   *     tags: [reviews]
   *     summary: One review, with its decision once decided
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     responses:
   *       '200':
   *         description: The review.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Review' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  routes.get('/reviews/:review_id', async (req, res) => {
    res.json(await reviews.reading.get(principalOf(res).scope, reviewIdOf(req)));
  });

  /**
   * @openapi
   * /reviews/{review_id}/decide:
   *   post:
   *     operationId: decideReview
   *     tags: [decisions]
   *     summary: Approve, reject or modify a pending review
   *     description: >-
   *       Records the decision and moves the review to `approved`, `rejected` or `modified` in
   *       one transaction, then wakes every agent waiting on it. `modify` needs a non-empty
   *       `modified_action` (the action to carry out instead). Of racing decisions exactly one
   *       wins; the others get 409 with the decision that stands. In the hosted edition, a
   *       review an approval workflow governs (`workflow` on the review) is decided by votes:
   *       each eligible person votes once (again: 409; not an approver of the stage voting
   *       now: 403), a vote that does not finish the review answers 202 with the workflow's
   *       progress, any reject ends it rejected, a modify replaces the action the later votes
   *       approve, and the vote that finishes it answers 200 with the decision, as without a
   *       workflow. Waiting agents get only that final decision.
   *     parameters: [{ $ref: '#/components/parameters/ReviewId' }]
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/DecisionCreate' }
   *     responses:
   *       '200':
   *         description: The decision as recorded.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Decision' }
   *       '202':
   *         description: A vote counted in the review's approval workflow, which still waits for more (hosted edition).
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/VoteRecorded' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '409':
   *         description: The review was already decided (the decision that stands is included), or this person has already voted on it.
   *         content:
   *           application/problem+json:
   *             schema: { $ref: '#/components/schemas/DecisionConflict' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  routes.post('/reviews/:review_id/decide', async (req: Request<{ review_id: string }, unknown, DecisionInput>, res) => {
    const outcome = await reviews.deciding.decideAs(principalOf(res), reviewIdOf(req), req.body);
    if (outcome.kind === 'voted') res.status(202).json(outcome.vote);
    else res.json(outcome.decision);
  });

  /**
   * @openapi
   * /reviews/{review_id}/decision:
   *   get:
   *     operationId: getDecision
   *     tags: [decisions]
   *     summary: The decision, or null while pending
   *     description: >-
   *       Answers the decision, or the JSON value `null` while the review is pending. With
   *       `wait=N` the request long-polls: it answers as soon as a decision is made, or `null`
   *       after N seconds (at most `blocking_timeout_seconds`).
   *     parameters:
   *       - $ref: '#/components/parameters/ReviewId'
   *       - name: wait
   *         in: query
   *         description: Seconds to wait for a decision before answering `null`.
   *         schema: { type: integer, minimum: 0, maximum: 86400 }
   *     responses:
   *       '200':
   *         description: The decision, or `null`.
   *         content:
   *           application/json:
   *             schema:
   *               type: object
   *               allOf: [{ $ref: '#/components/schemas/Decision' }]
   *               nullable: true
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/Unauthorized' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '503': { $ref: '#/components/responses/ServiceUnavailable' }
   */
  routes.get('/reviews/:review_id/decision', (req, res) => {
    const reviewId = reviewIdOf(req);
    const waitSeconds = queryInteger(req, 'wait', 0);
    if (waitSeconds > blockingTimeoutSeconds) {
      throw new AppError(400, `wait must be at most ${blockingTimeoutSeconds} (blocking_timeout_seconds)`, {
        errors: [{ field: 'wait', message: `must be <= ${blockingTimeoutSeconds}` }],
      });
    }
    const { scope } = principalOf(res);
    if (waitSeconds === 0) return reviews.reading.decision(scope, reviewId).then((decision) => sendDecision(res, decision));
    reviews.waiting.checkRoom();
    // Chained, not awaited, and returned from a plain function, as a blocking create's wait is.
    return reviews.waiting.wait(scope, reviewId, waitSeconds * 1000, clientGoneSignal(req, res)).then((outcome) => answerLongPoll(res, reviewId, outcome));
  });

}

/**
 * The JSON value `null` is written directly: response validators and `res.json` hooks treat a
 * null body as "no body" (a 204), which is not what clients of this endpoint expect.
 */
function sendDecision(res: Response, decision: DecisionRecord | null): void {
  if (decision) res.json(decision);
  else res.type('application/json').send('null');
}

function answerLongPoll(res: Response, reviewId: number, outcome: WaitOutcome): void {
  if (outcome.kind === 'decided') sendDecision(res, outcome.review.decision);
  else if (outcome.kind === 'timeout') sendDecision(res, null);
  else if (outcome.kind === 'shutdown') answerShuttingDown(res, reviewId, 'ask again shortly');
}

function answerShuttingDown(res: Response, reviewId: number, advice: string): void {
  res.set({ 'Retry-After': '5', Connection: 'close' });
  sendProblem(res, 503, `the server is shutting down; ${advice}`, { review_id: reviewId });
}
