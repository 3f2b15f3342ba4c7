import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { call } from './server';

/** An MCP client connected to Greenlight's tools, and the REST API the same reviews live in. */
export interface McpHarness {
  client: Client;
  apiUrl: string;
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
    });

    it('creates a review without waiting when blocking is false, visible over REST', async () => {
      const { client, apiUrl } = harness();
      const result = await callTool(client, 'request_review', { ...refund, urgency: 'high', confidence_score: 0.7, metadata: { order: 1042 }, blocking: false });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/^pending\n/);
      const outcome = result.structuredContent as { review_id: number; status: string; action_to_take: string | null };
      expect(outcome).toMatchObject({ status: 'pending', action_to_take: null });
      expect(textOf(result)).toContain(`"review_id": ${outcome.review_id}`);
      const stored = await call(apiUrl, 'GET', `/reviews/${outcome.review_id}`);
      expect(stored.body).toMatchObject({ ...refund, urgency: 'high', confidence_score: 0.7, metadata: { order: 1042 }, status: 'pending' });
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
