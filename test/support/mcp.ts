import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult, McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { call } from './server';

/** An MCP client connected to Greenlight's tools, and the REST API the same reviews live in. */
export interface McpHarness {
  client: Client;
  apiUrl: string;
  /** How long the server holds a call that came without a progress token (short in tests). */
  answerWithinSeconds: number;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { onprogress, timeout: 30_000 })) as CallToolResult;
}

/** The review id a waiting tool names in its first progress notification. */
export function reviewIdFrom(progress: Progress): number {
  const match = /Review (\d+)/.exec(progress.message ?? '');
  if (!match) throw new Error(`no review id in progress message ${JSON.stringify(progress.message)}`);
  return Number(match[1]);
}

/**
 * Starts a blocking `request_review` and resolves, once its first progress notification
 * arrived, with the review's id, the progress seen so far and the pending result.
 */
export async function startBlockingReview(client: Client, args: Record<string, unknown>) {
  const progress: Progress[] = [];
  let firstProgress!: (id: number) => void;
  const reviewId = new Promise<number>((resolve) => (firstProgress = resolve));
  const result = callTool(client, 'request_review', { blocking: true, ...args }, (p) => {
    progress.push(p);
    if (progress.length === 1) firstProgress(reviewIdFrom(p));
  });
  const id = await Promise.race([reviewId, result.then((r) => Promise.reject(new Error(`answered before any progress: ${textOf(r)}`)))]);
  return { id, progress, result };
}

const refund = { task_type: 'refund', proposed_action: 'Refund order 1042 in full (EUR 250.00)' };

function reviewIdOf(result: CallToolResult): number {
  return (result.structuredContent as { review_id: number }).review_id;
}

/** The JSON-RPC error a request is answered with. */
async function rpcError(client: Client, method: string, params: unknown): Promise<McpError> {
  const error = await client.request({ method, params } as never, CallToolResultSchema).then(
    (result) => new Error(`answered ${JSON.stringify(result)}`),
    (error: unknown) => error,
  );
  if (!(error instanceof McpError)) throw error;
  return error;
}

/**
 * What every transport must do the same way: the tools as an agent's MCP client sees them,
 * with decisions made through the REST API as a reviewer's dashboard makes them.
 */
export function describeReviewTools(transport: string, harness: () => McpHarness): void {
  describe(`the review tools over ${transport}`, () => {
    it('lists the five tools, each with a description and input and output schemas', async () => {
      const { tools } = await harness().client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        ['check_review_status', 'get_review_decision', 'list_pending_reviews', 'request_review', 'submit_feedback'],
      );
      for (const tool of tools) {
        expect(tool.description?.length).toBeGreaterThan(40);
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
      }
      const request = tools.find((tool) => tool.name === 'request_review')!;
      expect(request.inputSchema.required).toEqual(['task_type', 'proposed_action']);
      expect(request.inputSchema.properties?.agent_name).toMatchObject({ anyOf: [{ type: 'string', minLength: 1, maxLength: 100 }, { type: 'null' }] });
    });

    it('creates a review without waiting when blocking is false, visible over REST', async () => {
      const { client, apiUrl } = harness();
      const result = await callTool(client, 'request_review', { ...refund, urgency: 'high', confidence_score: 0.7, metadata: { order: 1042 }, agent_name: 'refund-bot', blocking: false });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/^pending\n/);
      const outcome = result.structuredContent as { review_id: number; status: string; action_to_take: string | null };
      expect(outcome).toMatchObject({ status: 'pending', action_to_take: null });
      expect(textOf(result)).toContain(`"review_id": ${outcome.review_id}`);
      const stored = await call(apiUrl, 'GET', `/reviews/${outcome.review_id}`);
      expect(stored.body).toMatchObject({ ...refund, urgency: 'high', confidence_score: 0.7, metadata: { order: 1042 }, agent_name: 'refund-bot', status: 'pending' });
    });

    it('waits, reporting progress, until a reviewer modifies the action, then says what to do instead', async () => {
      const { client, apiUrl } = harness();
      const waiting = await startBlockingReview(client, { ...refund, urgency: 'critical' });
      const decided = await call(apiUrl, 'POST', `/reviews/${waiting.id}/decide`, {
        decision_type: 'modify',
        modified_action: 'Refund order 1042 partially (EUR 125.00)',
        reviewer_name: 'dana',
        notes: 'half now',
      });
      expect(decided.status).toBe(200);
      const result = await waiting.result;
      expect(textOf(result)).toMatch(/^modified: use this action instead: Refund order 1042 partially \(EUR 125\.00\)\n/);
      expect(textOf(result)).toContain("Reviewer's notes: half now");
      expect(result.structuredContent).toMatchObject({ review_id: waiting.id, status: 'modified', action_to_take: 'Refund order 1042 partially (EUR 125.00)' });
      // The decision's receipt, as the decide answer gave it: the executor checks it before carrying out action_to_take.
      expect(decided.body.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(result.structuredContent).toMatchObject({ decision: { receipt: decided.body.receipt } });
      expect(waiting.progress.length).toBeGreaterThanOrEqual(1);
      expect(waiting.progress[0].message).toContain(`Review ${waiting.id} is waiting for a person`);
    });

    it('answers "rejected: <notes>" when the reviewer rejects, and "approved" when they approve', async () => {
      const { client, apiUrl } = harness();
      const rejected = await startBlockingReview(client, refund);
      await call(apiUrl, 'POST', `/reviews/${rejected.id}/decide`, { decision_type: 'reject', notes: 'parcel was delivered' });
      expect(textOf(await rejected.result)).toMatch(/^rejected: parcel was delivered\n.*do not carry out/);

      const approved = await startBlockingReview(client, refund);
      await call(apiUrl, 'POST', `/reviews/${approved.id}/decide`, { decision_type: 'approve' });
      const result = await approved.result;
      expect(textOf(result)).toMatch(/^approved\n/);
      expect(result.structuredContent).toMatchObject({ status: 'approved', action_to_take: refund.proposed_action });
    });

    it('shows the waiting agent as the review\'s waiting_until over REST while request_review waits, and null once decided', async () => {
      const { client, apiUrl } = harness();
      const waiting = await startBlockingReview(client, refund);
      await expect.poll(async () => (await call(apiUrl, 'GET', `/reviews/${waiting.id}`)).body.waiting_until).not.toBeNull();
      const listed = (await call(apiUrl, 'GET', '/reviews?waiting=true')).body.reviews.map((review: { id: number }) => review.id);
      expect(listed).toContain(waiting.id);
      await call(apiUrl, 'POST', `/reviews/${waiting.id}/decide`, { decision_type: 'approve' });
      expect(textOf(await waiting.result)).toMatch(/^approved\n/);
      expect((await call(apiUrl, 'GET', `/reviews/${waiting.id}`)).body.waiting_until).toBeNull();
    });

    it('answers "pending" with the review id and how to check later when no one decides in time', async () => {
      const { client, apiUrl } = harness();
      const result = await callTool(client, 'request_review', { ...refund, wait_seconds: 1 });
      const outcome = result.structuredContent as { review_id: number };
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(new RegExp(`^pending\\nNo decision on review ${outcome.review_id} within 1 s`));
      expect(textOf(result)).toContain('get_review_decision');
      expect((await call(apiUrl, 'GET', `/reviews/${outcome.review_id}`)).body.status).toBe('pending');

      // Checking later: the same review, decided meanwhile.
      await call(apiUrl, 'POST', `/reviews/${outcome.review_id}/decide`, { decision_type: 'approve', reviewer_name: 'sam' });
      const later = await callTool(client, 'get_review_decision', { review_id: outcome.review_id });
      expect(textOf(later)).toMatch(/^approved\nReview \d+ was approved by sam/);
      const status = await callTool(client, 'check_review_status', { review_id: outcome.review_id });
      expect(status.structuredContent).toMatchObject({ status: 'approved', decision: { decision_type: 'approve', reviewer_name: 'sam' } });
    });

    it('get_review_decision with wait_seconds answers the moment the decision is made', async () => {
      const { client, apiUrl } = harness();
      const created = await callTool(client, 'request_review', { ...refund, blocking: false });
      const id = (created.structuredContent as { review_id: number }).review_id;
      let started!: () => void;
      const waitingStarted = new Promise<void>((resolve) => (started = resolve));
      const waiting = callTool(client, 'get_review_decision', { review_id: id, wait_seconds: 60 }, () => started());
      await waitingStarted;
      await call(apiUrl, 'POST', `/reviews/${id}/decide`, { decision_type: 'reject', notes: 'not now' });
      expect(textOf(await waiting)).toMatch(/^rejected: not now/);
    });

    it('refuses invalid arguments with a tool error that names the rule', async () => {
      const { client, apiUrl } = harness();
      const before = (await call(apiUrl, 'GET', '/reviews')).body.total;
      const tooConfident = await callTool(client, 'request_review', { ...refund, confidence_score: 2, blocking: false });
      expect(tooConfident.isError).toBe(true);
      expect(textOf(tooConfident)).toContain('confidence_score must be between 0.0 and 1.0');
      const badUrgency = await callTool(client, 'request_review', { ...refund, urgency: 'urgent', blocking: false });
      expect(badUrgency.isError).toBe(true);
      expect(textOf(badUrgency)).toContain('urgency must be one of: low, medium, high, critical');
      const unknownField = await callTool(client, 'request_review', { ...refund, priority: 1, blocking: false });
      expect(unknownField.isError).toBe(true);
      expect(textOf(unknownField)).toContain('priority');
      const missing = await callTool(client, 'request_review', { task_type: 'refund', blocking: false });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain('proposed_action');
      expect((await call(apiUrl, 'GET', '/reviews')).body.total).toBe(before);
    });

    it('files a review with its attachments (base64), which the reviewer sees with it, and answers the decision', async () => {
      const { client, apiUrl } = harness();
      const photo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const waiting = await startBlockingReview(client, {
        ...refund,
        attachments: [
          { name: 'receipt.txt', content_type: 'text/plain', data: Buffer.from('EUR 250.00, order 1042').toString('base64') },
          { name: 'parcel.png', content_type: 'image/png', data: photo.toString('base64') },
        ],
      });
      const listed = await call(apiUrl, 'GET', `/reviews/${waiting.id}/attachments`);
      expect(listed.body.attachments.map((a: { file_name: string; content_type: string; size_bytes: number }) => [a.file_name, a.content_type, a.size_bytes])).toEqual([
        ['receipt.txt', 'text/plain', 22],
        ['parcel.png', 'image/png', 8],
      ]);
      const download = await fetch(`${apiUrl}/attachments/${listed.body.attachments[1].id}/download`);
      expect(Buffer.from(await download.arrayBuffer())).toEqual(photo);

      await call(apiUrl, 'POST', `/reviews/${waiting.id}/decide`, { decision_type: 'approve' });
      expect(textOf(await waiting.result)).toMatch(/^approved\n/);
    });

    it('refuses attachments that are not base64, or more than the server takes, with a tool error, filing nothing', async () => {
      const { client, apiUrl } = harness();
      const before = (await call(apiUrl, 'GET', '/reviews')).body.total;
      const garbled = await callTool(client, 'request_review', { ...refund, blocking: false, attachments: [{ name: 'notes.txt', data: 'not base64!' }] });
      expect(garbled.isError).toBe(true);
      expect(textOf(garbled)).toContain('attachments[0].data (notes.txt) is not base64');
      // One more than max_attachments_per_review's default, 20.
      const tooMany = Array.from({ length: 21 }, (_, index) => ({ name: `part-${index}.txt`, data: Buffer.from(`part ${index}`).toString('base64') }));
      const refused = await callTool(client, 'request_review', { ...refund, blocking: false, attachments: tooMany });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('at most 20 attachments (max_attachments_per_review)');
      expect((await call(apiUrl, 'GET', '/reviews')).body.total).toBe(before);
    });

    it('says plainly when a review does not exist', async () => {
      const result = await callTool(harness().client, 'check_review_status', { review_id: 999_999 });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('review 999999 does not exist');
    });

    it('stores feedback that the REST API shows, and refuses a rating outside 1-5', async () => {
      const { client, apiUrl } = harness();
      const created = await callTool(client, 'request_review', { ...refund, blocking: false });
      const id = (created.structuredContent as { review_id: number }).review_id;
      const feedback = await callTool(client, 'submit_feedback', { review_id: id, rating: 4, comment: 'quick and clear' });
      expect(feedback.isError).toBeFalsy();
      expect(feedback.structuredContent).toMatchObject({ review_id: id, rating: 4, comment: 'quick and clear' });
      const listed = await call(apiUrl, 'GET', `/reviews/${id}/feedback`);
      expect(listed.body).toMatchObject({ count: 1, feedback: [{ rating: 4, comment: 'quick and clear' }] });

      const tooHigh = await callTool(client, 'submit_feedback', { review_id: id, rating: 6 });
      expect(tooHigh.isError).toBe(true);
      expect(textOf(tooHigh)).toContain('rating must be from 1 to 5');
      const empty = await callTool(client, 'submit_feedback', { review_id: id });
      expect(empty.isError).toBe(true);
      expect(textOf(empty)).toMatch(/rating or comment is required/);
    });

    it('answers a blocking call from a client with default options "pending" before the client would time out, and says to keep waiting', async () => {
      const { client, apiUrl, answerWithinSeconds } = harness();
      // The SDK's defaults: no progress token, and the request given up after 60 s.
      const first = (await client.callTool({ name: 'request_review', arguments: refund })) as CallToolResult;
      const id = reviewIdOf(first);
      expect(first.isError).toBeFalsy();
      expect(first.structuredContent).toMatchObject({ status: 'pending', action_to_take: null });
      expect(textOf(first)).toMatch(new RegExp(`^pending\\nNo decision on review ${id} yet after ${answerWithinSeconds} s`));
      expect(textOf(first)).toContain(`call get_review_decision with {"review_id": ${id}, "wait_seconds": ${answerWithinSeconds}}`);

      const longWait = { review_id: id, wait_seconds: 3_600 };
      const again = (await client.callTool({ name: 'get_review_decision', arguments: longWait })) as CallToolResult;
      expect(textOf(again)).toMatch(new RegExp(`^pending\\nNo decision on review ${id} yet after ${answerWithinSeconds} s`));

      await call(apiUrl, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve', reviewer_name: 'sam' });
      const decided = (await client.callTool({ name: 'get_review_decision', arguments: longWait })) as CallToolResult;
      expect(textOf(decided)).toMatch(/^approved\nReview \d+ was approved by sam/);
    });

    it('runs request_review as a task for a client that asks for one, beyond the plain-call limit, with the verdict as its result', async () => {
      const { client, apiUrl } = harness();
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'request_review')?.execution?.taskSupport).toBe('optional');
      expect(tools.find((tool) => tool.name === 'get_review_decision')?.execution?.taskSupport).toBe('optional');

      const stream = client.experimental.tasks.callToolStream({ name: 'request_review', arguments: { ...refund, urgency: 'high' } });
      const statuses: string[] = [];
      let result: CallToolResult | undefined;
      for await (const message of stream) {
        if (message.type === 'error') throw message.error;
        if (message.type === 'result') result = message.result as CallToolResult;
        if (message.type === 'taskStatus') statuses.push(message.task.status);
        if (message.type !== 'taskCreated') continue;
        expect(message.task.status).toBe('working');
        const id = Number(/Review (\d+) is waiting for a person/.exec(message.task.statusMessage ?? '')?.[1]);
        // A plain call that gives up first proves that the task outlived the plain-call limit.
        const plain = (await client.callTool({ name: 'get_review_decision', arguments: { review_id: id, wait_seconds: 3_600 } })) as CallToolResult;
        expect(textOf(plain)).toMatch(/^pending\n/);
        expect((await client.experimental.tasks.getTask(message.task.taskId)).status).toBe('working');
        await call(apiUrl, 'POST', `/reviews/${id}/decide`, { decision_type: 'modify', modified_action: 'Refund EUR 100.00', reviewer_name: 'dana' });
      }
      expect(statuses.at(-1)).toBe('completed');
      expect(textOf(result!)).toMatch(/^modified: use this action instead: Refund EUR 100\.00\n/);
      expect(result!.structuredContent).toMatchObject({ status: 'modified', action_to_take: 'Refund EUR 100.00' });
    });

    it('accepts reasoning and confidence as aliases of agent_reasoning and confidence_score, but not a field under both names', async () => {
      const { client, apiUrl } = harness();
      const created = await callTool(client, 'request_review', { ...refund, reasoning: 'customer was charged twice', confidence: 0.4, blocking: false });
      expect(created.isError).toBeFalsy();
      const stored = await call(apiUrl, 'GET', `/reviews/${reviewIdOf(created)}`);
      expect(stored.body).toMatchObject({ agent_reasoning: 'customer was charged twice', confidence_score: 0.4 });

      const both = await callTool(client, 'request_review', { ...refund, reasoning: 'a', agent_reasoning: 'b', blocking: false });
      expect(both.isError).toBe(true);
      expect(textOf(both)).toContain('send reasoning or agent_reasoning, not both');
      const bothScores = await callTool(client, 'request_review', { ...refund, confidence: 0.5, confidence_score: 0.5, blocking: false });
      expect(bothScores.isError).toBe(true);
      expect(textOf(bothScores)).toContain('send confidence or confidence_score, not both');
      const tooConfident = await callTool(client, 'request_review', { ...refund, confidence: 1.5, blocking: false });
      expect(tooConfident.isError).toBe(true);
      expect(textOf(tooConfident)).toContain('confidence must be between 0.0 and 1.0');
    });

    it('answers a malformed request with -32602 and a one-line message naming what is wrong', async () => {
      const { client } = harness();
      const cases: Array<[string, unknown, RegExp]> = [
        ['tools/call', { arguments: {} }, /params\.name/],
        ['tools/call', { name: 'check_review_status', arguments: 5 }, /params\.arguments/],
        ['tools/call', { name: 'approve_everything', arguments: {} }, /unknown tool approve_everything/],
        ['tools/list', { cursor: 5 }, /params\.cursor/],
      ];
      for (const [method, params, names] of cases) {
        const error = await rpcError(client, method, params);
        expect(error.code, JSON.stringify(params)).toBe(-32602);
        expect(error.message).toMatch(names);
        expect(error.message).not.toContain('\n');
      }
      expect((await client.listTools()).tools).toHaveLength(5);
    });

    it('lists pending reviews most urgent first, filtered by task type', async () => {
      const { client } = harness();
      const taskType = `deploy-${Date.now()}`;
      for (const level of ['low', 'critical', 'medium']) {
        await callTool(client, 'request_review', { task_type: taskType, proposed_action: `deploy at ${level}`, urgency: level, blocking: false });
      }
      const listed = await callTool(client, 'list_pending_reviews', { task_type: taskType });
      const page = listed.structuredContent as { total: number; reviews: Array<{ urgency: string }> };
      expect(page.total).toBe(3);
      expect(page.reviews.map((review) => review.urgency)).toEqual(['critical', 'medium', 'low']);
      expect(textOf(listed)).toMatch(/^3 pending reviews \(page 1 of 1\):\n- review \d+ \[critical\]/);
    });
  });
}
