import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import { DECISION_TYPES, type FeedbackRecord, type ReviewInput, type ReviewRecord, REVIEW_STATUSES, URGENCIES } from '../domain/records';
import { packageVersion } from '../package-info';
import type { DecisionWait, ReviewGateway } from './gateway';
import { describeOutcome, type PendingReason, reviewOutcome } from './outcome';

export interface ReviewToolsOptions {
  /** How long a blocking `request_review` waits unless the call says otherwise (`blocking_timeout_seconds`). */
  defaultWaitSeconds: number;
  /** How often a waiting tool reports progress to a client that asked for it. */
  progressIntervalMs?: number;
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const MAX_WAIT_SECONDS = 86_400;
const ID_MAX = 2_147_483_647;

// The limits mirror the ReviewCreate schema of the REST API (a test compares the two), so a
// call the tool accepts is one the API accepts.
const reviewId = z.number().int().min(1).max(ID_MAX).describe('The review_id that request_review returned.');
const optionalId = (what: string) => z.number().int().min(1).max(ID_MAX).nullable().optional().describe(what);
const urgency = z.enum(URGENCIES, { error: `urgency must be one of: ${URGENCIES.join(', ')}` });

const requestReviewInput = z
  .object({
    task_type: z.string().min(1).max(255).describe('Short kind of task, e.g. "refund", "email_send", "db_migration".'),
    proposed_action: z
      .string()
      .min(1)
      .max(100_000)
      .describe('Exactly what you intend to do, complete enough for a person to judge it: the e-mail text, the SQL, the amount and recipient.'),
    agent_reasoning: z.string().max(100_000).nullable().optional().describe('Why you propose this action and why you ask for review.'),
    confidence_score: z
      .number()
      .min(0, { error: 'confidence_score must be between 0.0 and 1.0' })
      .max(1, { error: 'confidence_score must be between 0.0 and 1.0' })
      .nullable()
      .optional()
      .describe('Your confidence that the action is right, from 0.0 to 1.0.'),
    urgency: urgency.optional().describe('How soon a person should look: low, medium (default), high or critical.'),
    framework: z.string().max(255).nullable().optional().describe('Your agent framework, e.g. "langchain", "claude-code".'),
    metadata: z.record(z.string(), z.unknown()).nullable().optional().describe('Facts that help the reviewer: ids, amounts, links.'),
    organization_id: optionalId('Organisation the review belongs to (multi-tenant installs).'),
    agent_id: optionalId('Your registered agent id, if you have one.'),
    blocking: z
      .boolean()
      .default(true)
      .describe('true (default): wait for the decision before answering. false: answer at once with the review_id.'),
    wait_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_WAIT_SECONDS)
      .optional()
      .describe('Longest wait for a blocking request, in seconds (default: the server\'s blocking_timeout_seconds).'),
  })
  .strict();

const outcomeSchema = z.object({
  review_id: z.number().int(),
  status: z.enum(REVIEW_STATUSES),
  action_to_take: z
    .string()
    .nullable()
    .describe('What you may carry out now: the proposed action when approved, the reviewer\'s version when modified; null when rejected or pending.'),
  task_type: z.string(),
  urgency: z.enum(URGENCIES),
  proposed_action: z.string(),
  created_at: z.string(),
  assigned_to: z.string().nullable(),
  decision: z
    .object({
      decision_type: z.enum(DECISION_TYPES),
      reviewer_name: z.string().nullable(),
      notes: z.string().nullable(),
      modified_action: z.string().nullable(),
      decided_at: z.string(),
    })
    .nullable(),
});

const feedbackSchema = z.object({
  id: z.number().int(),
  review_id: z.number().int(),
  rating: z.number().int().nullable(),
  comment: z.string().nullable(),
  created_at: z.string(),
});

const pendingListSchema = z.object({
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  reviews: z.array(
    z.object({
      review_id: z.number().int(),
      task_type: z.string(),
      urgency: z.enum(URGENCIES),
      proposed_action: z.string(),
      confidence_score: z.number().nullable(),
      created_at: z.string(),
      assigned_to: z.string().nullable(),
    }),
  ),
});

function outcomeResult(review: ReviewRecord, pending?: PendingReason): CallToolResult {
  return { content: [{ type: 'text', text: describeOutcome(review, pending) }], structuredContent: { ...reviewOutcome(review) } };
}

/** Leaves out the fields a client sent as undefined, so the stored review has its defaults. */
function reviewInput(fields: Omit<z.infer<typeof requestReviewInput>, 'blocking' | 'wait_seconds'>): ReviewInput {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as unknown as ReviewInput;
}

const TEXT_PREVIEW = 200;

function preview(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > TEXT_PREVIEW ? `${oneLine.slice(0, TEXT_PREVIEW - 1)}…` : oneLine;
}

/**
 * An MCP server with Greenlight's tools over `gateway`. A new one per session: the SDK binds
 * a server to one transport.
 */
export function createReviewTools(gateway: ReviewGateway, options: ReviewToolsOptions): McpServer {
  const progressIntervalMs = options.progressIntervalMs ?? 10_000;
  const server = new McpServer(
    { name: 'greenlight', title: 'Greenlight human review', version: packageVersion },
    {
      instructions:
        'Greenlight puts a person in the loop. Before an action that is consequential or hard to undo, call request_review and follow its answer: ' +
        'carry out the action only when it says "approved", carry out the reviewer\'s version when it says "modified", and never when it says "rejected" or "pending".',
    },
  );

  /**
   * Waits for the decision and, when the client gave a progress token, tells it every
   * `progressIntervalMs` that the wait goes on, so it does not give up on a long human decision.
   */
  async function waitWithProgress(review: ReviewRecord, waitSeconds: number, extra: ToolExtra): Promise<CallToolResult> {
    const progressToken = extra._meta?.progressToken;
    const started = Date.now();
    const report = (message: string): void => {
      if (progressToken === undefined) return;
      const progress = (Date.now() - started) / 1000;
      extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: waitSeconds, message } })
        .catch(() => {
          // The client went away; the wait ends through the cancellation signal.
        });
    };
    report(`Review ${review.id} is waiting for a person to decide.`);
    const heartbeat = setInterval(
      () => report(`Still waiting for a decision on review ${review.id} (${Math.round((Date.now() - started) / 1000)} s of at most ${waitSeconds} s).`),
      progressIntervalMs,
    );
    let wait: DecisionWait;
    try {
      wait = await gateway.waitForDecision(review.id, waitSeconds * 1000, extra.signal);
    } finally {
      clearInterval(heartbeat);
    }
    if (wait.kind === 'decided') return outcomeResult(wait.review);
    if (wait.kind === 'unavailable') return outcomeResult(review, { kind: 'unavailable', reason: wait.reason });
    // A decision may have landed as the time ran out; prefer it to "pending".
    return outcomeResult(await gateway.get(review.id), { kind: 'timed_out', waitedSeconds: waitSeconds });
  }

  server.registerTool(
    'request_review',
    {
      title: 'Ask a person to review an action',
      description:
        'Ask a person to approve, reject or modify an action before you carry it out. Use it for anything consequential or hard to undo ' +
        '(payments, messages to customers, deleting data, deployments). By default it waits for the decision (blocking: true). ' +
        'The answer starts with the verdict: "approved" (carry out the action as proposed), "rejected: <reason>" (do not carry it out), ' +
        '"modified: use this action instead: <action>" (carry out that action instead), or "pending" with the review_id when no one decided in time ' +
        '(do not act; call get_review_decision later).',
      inputSchema: requestReviewInput,
      outputSchema: outcomeSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ blocking, wait_seconds: waitSeconds, ...fields }, extra) => {
      const review = await gateway.create(reviewInput(fields));
      if (!blocking) return outcomeResult(review);
      return waitWithProgress(review, waitSeconds ?? options.defaultWaitSeconds, extra);
    },
  );

  server.registerTool(
    'get_review_decision',
    {
      title: 'Get (or wait for) a review\'s decision',
      description:
        'The decision on a review you requested, with the same verdict-first answer as request_review. With wait_seconds, waits up to that long ' +
        'for a person to decide and answers the moment they do.',
      inputSchema: z
        .object({
          review_id: reviewId,
          wait_seconds: z.number().int().min(0).max(MAX_WAIT_SECONDS).default(0).describe('How long to wait for a decision if there is none yet (0: answer at once).'),
        })
        .strict(),
      outputSchema: outcomeSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ review_id: id, wait_seconds: waitSeconds }, extra) => {
      const review = await gateway.get(id);
      if (review.status !== 'pending' || waitSeconds === 0) return outcomeResult(review);
      return waitWithProgress(review, waitSeconds, extra);
    },
  );

  server.registerTool(
    'check_review_status',
    {
      title: 'Check a review\'s status',
      description: 'Where a review stands right now (pending, approved, rejected or modified), who it is assigned to and who decided. Never waits.',
      inputSchema: z.object({ review_id: reviewId }).strict(),
      outputSchema: outcomeSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ review_id: id }) => {
      const review = await gateway.get(id);
      const result = outcomeResult(review);
      const assignee = review.assigned_to ? `, assigned to ${review.assigned_to}` : '';
      const summary = `Review ${review.id}: ${review.task_type}, ${review.urgency} urgency, created ${review.created_at}${assignee}.`;
      return { ...result, content: [...result.content, { type: 'text', text: summary }] };
    },
  );

  server.registerTool(
    'submit_feedback',
    {
      title: 'Give feedback on a review',
      description: 'Record how a review went: a rating from 1 (poor) to 5 (excellent), a comment, or both. Reviewers see it in the dashboard.',
      inputSchema: z
        .object({
          review_id: reviewId,
          rating: z.number().int().min(1, { error: 'rating must be from 1 to 5' }).max(5, { error: 'rating must be from 1 to 5' }).nullable().optional(),
          comment: z.string().min(1).max(10_000).nullable().optional(),
        })
        .strict(),
      outputSchema: feedbackSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ review_id: id, rating, comment }) => {
      const feedback: FeedbackRecord = await gateway.addFeedback(id, { rating, comment });
      return { content: [{ type: 'text', text: `Feedback ${feedback.id} recorded on review ${id}.` }], structuredContent: { ...feedback } };
    },
  );

  server.registerTool(
    'list_pending_reviews',
    {
      title: 'List reviews waiting for a decision',
      description: 'Reviews still waiting for a person, most urgent and oldest first, optionally only of one task type, urgency or framework.',
      inputSchema: z
        .object({
          task_type: z.string().min(1).max(255).optional(),
          urgency: urgency.optional(),
          framework: z.string().min(1).max(255).optional(),
          page: z.number().int().min(1).max(1_000_000).default(1),
          page_size: z.number().int().min(1).max(100).default(20),
        })
        .strict(),
      outputSchema: pendingListSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ page, page_size: pageSize, ...filters }) => {
      const found = await gateway.listPending(filters, page, pageSize);
      const reviews = found.reviews.map((review) => ({
        review_id: review.id,
        task_type: review.task_type,
        urgency: review.urgency,
        proposed_action: review.proposed_action,
        confidence_score: review.confidence_score,
        created_at: review.created_at,
        assigned_to: review.assigned_to,
      }));
      const pages = Math.max(1, Math.ceil(found.total / pageSize));
      const lines = reviews.map((r) => `- review ${r.review_id} [${r.urgency}] ${r.task_type}: ${preview(r.proposed_action)} (created ${r.created_at})`);
      const heading = found.total === 0 ? 'No reviews are pending.' : `${found.total} pending review${found.total === 1 ? '' : 's'} (page ${page} of ${pages}):`;
      return {
        content: [{ type: 'text', text: [heading, ...lines].join('\n') }],
        structuredContent: { total: found.total, page, page_size: pageSize, reviews },
      };
    },
  );

  return server;
}
