import type { CreateTaskRequestHandlerExtra, ToolTaskHandler } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AnySchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, CreateTaskResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DECISION_TYPES, type FeedbackRecord, type ReviewInput, type ReviewRecord, REVIEW_STATUSES, URGENCIES } from '../domain/reviews/records';
import { packageVersion } from '../package-info';
import type { WholeFile } from '../domain/reviews/attachments';
import type { DecisionWait, ReviewGateway } from './gateway';
import { oneLine } from '../domain/shared/text';
import { describeOutcome, type PendingReason, reviewOutcome } from './outcome';
import { CheckedTransport } from './request-checks';
import { reviewCreateField, reviewCreateFields } from './review-create';
import { ReviewTasks } from './review-tasks';

/**
 * How long a waiting call is held for a client that gave no progress token: the MCP SDKs give
 * up on a request after 60 s unless progress notifications reset their timer (and most
 * clients keep that default), so the call is answered "pending" a little before.
 */
export const ANSWER_WITHIN_SECONDS = 50;

export interface ReviewToolsOptions {
  /** How long a blocking `request_review` waits unless the call says otherwise (`blocking_timeout_seconds`). */
  defaultWaitSeconds: number;
  /** How often a waiting tool reports progress to a client that asked for it. */
  progressIntervalMs?: number;
  /** Longest a call without a progress token is held before it is answered "pending" (default ANSWER_WITHIN_SECONDS). */
  answerWithinSeconds?: number;
  /** How often a client should poll a task (`pollInterval`; default 2 s, which a decision takes at most to reach it). */
  taskPollIntervalMs?: number;
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const MAX_WAIT_SECONDS = 86_400;
const ID_MAX = 2_147_483_647;
/** How long the result of a task a client asked for stays available after the task ends. */
const TASK_RESULT_KEPT_MS = 10 * 60_000;

const reviewId = z.number().int().min(1).max(ID_MAX).describe('The review_id that request_review returned.');
const urgency = z.enum(URGENCIES, { error: `urgency must be one of: ${URGENCIES.join(', ')}` });

/**
 * Names that agents written for the MCP tool of the FastAPI service Greenlight follows send,
 * for fields of ours: alias → field. They exist in MCP only; the REST API keeps one name each.
 */
const ALIASES = { reasoning: 'agent_reasoning', confidence: 'confidence_score' } as const;

/** A file for the reviewer, as MCP carries bytes: base64 in the call's JSON. */
const attachmentInput = z
  .object({
    name: z.string().min(1).max(255).describe('The file name the reviewer sees, e.g. receipt.pdf.'),
    content_type: z.string().min(1).max(255).optional().describe('Its media type, e.g. image/png or text/plain (default: application/octet-stream).'),
    data: z.string().describe("The file's bytes, base64-encoded."),
  })
  .strict();

/** Standard base64, padding optional; line breaks and spaces as some encoders add them are ignored. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The files of a call, decoded; refused (naming the one) when one is not base64. */
function decodedFiles(attachments: ReadonlyArray<z.output<typeof attachmentInput>>): WholeFile[] {
  return attachments.map(({ name, content_type: contentType, data }, index) => {
    const text = data.replace(/\s+/g, '');
    if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) {
      throw new Error(`attachments[${index}].data (${name}) is not base64: send the file's bytes base64-encoded`);
    }
    return { name, contentType, data: Buffer.from(text, 'base64') };
  });
}

/**
 * request_review's input: the REST API's ReviewCreate, taken from the OpenAPI document (so the
 * tool accepts what the API accepts and describes it in the same words), with what is MCP's
 * own: the aliases, a wait by default, and how long to wait.
 */
function requestReviewInput() {
  return z
    .object({
      ...reviewCreateFields(),
      reasoning: reviewCreateField('agent_reasoning', 'reasoning').describe('Another name for agent_reasoning (send one or the other).'),
      confidence: reviewCreateField('confidence_score', 'confidence').describe('Another name for confidence_score (send one or the other).'),
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
      attachments: z
        .array(attachmentInput)
        .optional()
        .describe(
          'Files for the reviewer to look at (a screenshot, a diff, the file an action changes), stored with the review: the reviewer never sees it without them. ' +
            "At most the server's max_attachments_per_review files, each at most its max_attachment_bytes; over Streamable HTTP the whole call is at most 1 MiB of JSON.",
        ),
    })
    .strict()
    .superRefine((input, context) => {
      for (const [alias, field] of Object.entries(ALIASES)) {
        if (input[alias as keyof typeof ALIASES] !== undefined && input[field] !== undefined) {
          context.addIssue({ code: 'custom', path: [alias], message: `send ${alias} or ${field}, not both: ${alias} is another name for ${field}` });
        }
      }
    });
}

type RequestReviewInput = z.output<ReturnType<typeof requestReviewInput>>;

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
      receipt: z
        .string()
        .nullable()
        .describe('The decision\'s signed receipt (compact JWS): whoever carries out action_to_take can check it against /.well-known/jwks.json and the action first.'),
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

/**
 * The review to create: aliases under their own names, and the fields a client left out left
 * out, so the stored review has its defaults.
 */
function reviewInput({ reasoning, confidence, ...fields }: Omit<RequestReviewInput, 'blocking' | 'wait_seconds' | 'attachments'>): ReviewInput {
  const named = {
    ...fields,
    agent_reasoning: fields.agent_reasoning !== undefined ? fields.agent_reasoning : reasoning,
    confidence_score: fields.confidence_score !== undefined ? fields.confidence_score : confidence,
  };
  return Object.fromEntries(Object.entries(named).filter(([, value]) => value !== undefined)) as unknown as ReviewInput;
}

function toolError(error: unknown): CallToolResult {
  return { content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }], isError: true };
}

const TEXT_PREVIEW = 200;


/** What a waiting tool starts from: the review, and how long to wait for its decision (0: answer now). */
interface Wait {
  review: ReviewRecord;
  seconds: number;
}

interface WaitingToolConfig<Input extends z.ZodObject> {
  title: string;
  description: string;
  inputSchema: Input;
  annotations: ToolAnnotations;
  begin(args: z.output<Input>): Promise<Wait>;
}

/**
 * The MCP server of one session. Requests the SDK would answer with a validation dump are
 * answered first, with -32602 (see CheckedTransport).
 */
class ReviewToolServer extends McpServer {
  constructor(private readonly toolNames: ReadonlySet<string>, ...args: ConstructorParameters<typeof McpServer>) {
    super(...args);
  }

  override async connect(transport: Transport): Promise<void> {
    await super.connect(new CheckedTransport(transport, this.toolNames));
  }
}

/**
 * An MCP server with Greenlight's tools over `gateway`. A new one per session: the SDK binds
 * a server to one transport.
 */
export function createReviewTools(gateway: ReviewGateway, options: ReviewToolsOptions): McpServer {
  const progressIntervalMs = options.progressIntervalMs ?? 10_000;
  const answerWithinSeconds = options.answerWithinSeconds ?? ANSWER_WITHIN_SECONDS;
  const taskPollIntervalMs = options.taskPollIntervalMs ?? 2_000;
  const tasks = new ReviewTasks(TASK_RESULT_KEPT_MS);
  const toolNames = new Set<string>();
  const server = new ReviewToolServer(
    toolNames,
    { name: 'greenlight', title: 'Greenlight human review', version: packageVersion },
    {
      instructions:
        'Greenlight puts a person in the loop. Before an action that is consequential or hard to undo, call request_review and follow its answer: ' +
        'carry out the action only when it says "approved", carry out the reviewer\'s version when it says "modified", and never when it says "rejected" or "pending". ' +
        'On "pending", call get_review_decision with the review_id until it gives the verdict.',
      taskStore: tasks,
      capabilities: { tasks: { requests: { tools: { call: {} } }, list: {}, cancel: {} } },
    },
  );
  server.server.onclose = () => tasks.close();

  /** Records a tool's name for CheckedTransport: the SDK keeps its list of tools to itself. */
  function named(name: string): string {
    toolNames.add(name);
    return name;
  }

  /** The answer once the wait is over, however it ended. */
  async function settle(review: ReviewRecord, wait: DecisionWait, timedOut: PendingReason): Promise<CallToolResult> {
    if (wait.kind === 'decided') return outcomeResult(wait.review);
    if (wait.kind === 'unavailable') return outcomeResult(review, { kind: 'unavailable', reason: wait.reason });
    // A decision may have landed as the time ran out; prefer it to "pending".
    return outcomeResult(await gateway.get(review.id), timedOut);
  }

  /**
   * Waits for the decision while the client holds the call. A client that gave a progress
   * token hears every `progressIntervalMs` that the wait goes on, so it does not give up on a
   * long human decision; one that gave none is answered within `answerWithinSeconds`.
   */
  async function waitWithProgress({ review, seconds }: Wait, extra: ToolExtra): Promise<CallToolResult> {
    const progressToken = extra._meta?.progressToken;
    const heldSeconds = progressToken === undefined ? Math.min(seconds, answerWithinSeconds) : seconds;
    const started = Date.now();
    const report = (message: string): void => {
      if (progressToken === undefined) return;
      const progress = (Date.now() - started) / 1000;
      extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: seconds, message } })
        .catch(() => {
          // The client went away; the wait ends through the cancellation signal.
        });
    };
    report(`Review ${review.id} is waiting for a person to decide.`);
    const heartbeat = setInterval(
      () => report(`Still waiting for a decision on review ${review.id} (${Math.round((Date.now() - started) / 1000)} s of at most ${seconds} s).`),
      progressIntervalMs,
    );
    let wait: DecisionWait;
    try {
      wait = await gateway.waitForDecision(review.id, heldSeconds * 1000, extra.signal);
    } finally {
      clearInterval(heartbeat);
    }
    const timedOut: PendingReason =
      heldSeconds < seconds ? { kind: 'answered_early', waitedSeconds: heldSeconds } : { kind: 'timed_out', waitedSeconds: seconds };
    return settle(review, wait, timedOut);
  }

  /**
   * A task the client asked for: answered once the review is known, with the task, which ends
   * when the person decides or `seconds` pass. No call is held meanwhile, so no client timeout applies.
   */
  async function runTask(taskId: string, begin: () => Promise<Wait>, extra: CreateTaskRequestHandlerExtra): Promise<CreateTaskResult> {
    const store = extra.taskStore;
    let wait: Wait;
    try {
      wait = await begin();
    } catch (error) {
      await store.storeTaskResult(taskId, 'failed', toolError(error));
      return { task: await store.getTask(taskId) };
    }
    const { review, seconds } = wait;
    if (seconds === 0) {
      await store.storeTaskResult(taskId, 'completed', outcomeResult(review));
      return { task: await store.getTask(taskId) };
    }
    await tasks.updateTaskStatus(taskId, 'working', `Review ${review.id} is waiting for a person to decide (at most ${seconds} s).`);
    gateway
      .waitForDecision(review.id, seconds * 1000, tasks.waitSignal(taskId))
      .then((decision) => settle(review, decision, { kind: 'timed_out', waitedSeconds: seconds }))
      .then(
        (result) => store.storeTaskResult(taskId, 'completed', result),
        (error: unknown) => store.storeTaskResult(taskId, 'failed', toolError(error)),
      )
      .catch(() => {
        // Cancelled by the client, or the session ended: no one will ask for the result.
      });
    return { task: await store.getTask(taskId) };
  }

  /** A plain call: the SDK answers it with the task's result as soon as the task has ended, so it ends here. */
  async function answerPlainCall(taskId: string, begin: () => Promise<Wait>, extra: CreateTaskRequestHandlerExtra): Promise<CreateTaskResult> {
    try {
      const wait = await begin();
      const result = wait.seconds === 0 ? outcomeResult(wait.review) : await waitWithProgress(wait, extra);
      // Straight to the store: its wrapper in `extra` would tell the client about a task it never asked for.
      await tasks.storeTaskResult(taskId, 'completed', result);
      return { task: await extra.taskStore.getTask(taskId) };
    } catch (error) {
      tasks.forget(taskId);
      throw error;
    }
  }

  /**
   * A tool whose call may wait for a person. A client that supports tasks may run it as one
   * (`task` in `tools/call`); a plain call is held for the wait, within the client's timeout.
   */
  function registerWaitingTool<Input extends z.ZodObject>(name: string, { begin, inputSchema, ...tool }: WaitingToolConfig<Input>): void {
    const handler: ToolTaskHandler<AnySchema> = {
      async createTask(args, extra) {
        // The SDK has checked the arguments against the input schema; its types for task tools leave them unknown.
        const beginWait = () => begin(args as z.output<Input>);
        const { taskId } = await extra.taskStore.createTask({ pollInterval: taskPollIntervalMs });
        return tasks.askedFor(taskId) ? runTask(taskId, beginWait, extra) : answerPlainCall(taskId, beginWait, extra);
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    };
    const execution = { taskSupport: 'optional' } as const;
    server.experimental.tasks.registerToolTask(named(name), { ...tool, inputSchema: inputSchema as AnySchema, outputSchema: outcomeSchema, execution }, handler);
  }

  registerWaitingTool('request_review', {
    title: 'Ask a person to review an action',
    description:
      'Ask a person to approve, reject or modify an action before you carry it out. Use it for anything consequential or hard to undo ' +
      '(payments, messages to customers, deleting data, deployments). By default it waits for the decision (blocking: true). ' +
      'The answer starts with the verdict: "approved" (carry out the action as proposed), "rejected: <reason>" (do not carry it out), ' +
      '"modified: use this action instead: <action>" (carry out that action instead), or "pending" with the review_id when no one has decided yet: ' +
      `a call is answered within ${answerWithinSeconds} s unless your client follows progress notifications. On "pending", do not act: ` +
      'call get_review_decision with the review_id, again each time it answers "pending", until it gives the verdict.',
    inputSchema: requestReviewInput(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async begin({ blocking, wait_seconds: waitSeconds, attachments = [], ...fields }) {
      const review = await gateway.create(reviewInput(fields), decodedFiles(attachments));
      return { review, seconds: blocking ? (waitSeconds ?? options.defaultWaitSeconds) : 0 };
    },
  });

  registerWaitingTool('get_review_decision', {
    title: 'Get (or wait for) a review\'s decision',
    description:
      'The decision on a review you requested, with the same verdict-first answer as request_review. With wait_seconds, waits up to that long ' +
      `for a person to decide and answers the moment they do; without progress notifications a call is answered within ${answerWithinSeconds} s, ` +
      '"pending" if no one has decided yet: then call it again.',
    inputSchema: z
      .object({
        review_id: reviewId,
        wait_seconds: z.number().int().min(0).max(MAX_WAIT_SECONDS).default(0).describe('How long to wait for a decision if there is none yet (0: answer at once).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async begin({ review_id: id, wait_seconds: waitSeconds }) {
      const review = await gateway.get(id);
      return { review, seconds: review.status === 'pending' ? waitSeconds : 0 };
    },
  });

  server.registerTool(
    named('check_review_status'),
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
    named('submit_feedback'),
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
    named('list_pending_reviews'),
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
      const lines = reviews.map((r) => `- review ${r.review_id} [${r.urgency}] ${r.task_type}: ${oneLine(r.proposed_action, TEXT_PREVIEW)} (created ${r.created_at})`);
      const heading = found.total === 0 ? 'No reviews are pending.' : `${found.total} pending review${found.total === 1 ? '' : 's'} (page ${page} of ${pages}):`;
      return {
        content: [{ type: 'text', text: [heading, ...lines].join('\n') }],
        structuredContent: { total: found.total, page, page_size: pageSize, reviews },
      };
    },
  );

  return server;
}
