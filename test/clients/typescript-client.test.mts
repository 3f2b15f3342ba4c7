import fs from 'node:fs';
import path from 'node:path';
import { GreenlightClient, GreenlightConnectionError, GreenlightError, GreenlightUnavailableError, ToolCallReviewer, type GreenlightEvent } from '@greenlight/client';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startCli, stopProgram, type RunningCli } from '../support/cli.js';
import { decide, pendingReviewOf, RetryLog } from '../support/client.mjs';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { makeTempDir } from '../support/temp.js';

// The typed client (clients/typescript) against a real Greenlight on loopback.

describe('requestReview', () => {
  let running: RunningCli | undefined;
  let temp: ReturnType<typeof makeTempDir> | undefined;
  afterEach(async () => {
    await stopProgram(running);
    running = undefined;
    temp?.remove();
  });

  // Three one-second server timeouts, a stop and a start of the server process: longer than
  // the default test timeout on a loaded machine, though every step waits for an event.
  it('outlives three server-side timeouts and a server restart, and gets the decision of the one review it filed', { timeout: 120_000 }, async () => {
    temp = makeTempDir();
    const port = await freePort();
    const env = { GREENLIGHT_BLOCKING_TIMEOUT_SECONDS: '1' };
    const start = (): Promise<RunningCli> => startCli(['--api-only', '--port', String(port)], { cwd: temp!.dir, env });
    running = await start();
    const baseUrl = running.url;
    const client = new GreenlightClient({ baseUrl });
    const log = new RetryLog();

    const answer = client.requestReview({ task_type: 'restart-proof', proposed_action: 'Rotate the signing key' }, { onRetry: log.record });
    await log.reached('timeout', 3);

    await stopProgram(running);
    running = undefined;
    await log.reached('connection', 1);
    running = await start();
    const timeoutsBeforeRestart = log.count('timeout');
    await log.reached('timeout', timeoutsBeforeRestart + 1);

    const reviewId = await pendingReviewOf(baseUrl, 'restart-proof');
    await decide(baseUrl, reviewId, { decision_type: 'approve', notes: 'go' });
    const review = await answer;

    expect(review).toMatchObject({ id: reviewId, status: 'approved', decision: { decision_type: 'approve', notes: 'go', reviewer_name: 'dana' } });
    expect((await call(baseUrl, 'GET', '/reviews?task_type=restart-proof')).body.total).toBe(1);
    expect(log.retries.every((retry) => retry.reason === 'connection' || retry.reviewId === reviewId)).toBe(true);
  });
});

describe('the typed client', () => {
  let server: TestServer;
  let client: GreenlightClient;
  afterEach(() => server?.dispose());

  async function start(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<void> {
    server = await startTestServer(overrides);
    client = new GreenlightClient({ baseUrl: server.url, apiKey: overrides.api_key });
  }

  it('answers with the pending review when its own deadline passes first', async () => {
    await start({ blocking_timeout_seconds: 60 });
    const review = await client.requestReview({ task_type: 'deadline', proposed_action: 'Wait briefly' }, { wait: 1 });
    expect(review).toMatchObject({ status: 'pending', decision: null });
    expect((await call(server.url, 'GET', '/reviews')).body.total).toBe(1);
  });

  it("files the agent's name, and a tool review names its agent too", async () => {
    await start();
    const filed = await client.createReview({ task_type: 'named', proposed_action: 'Send the invoice', agent_name: 'billing-bot' });
    expect(filed.agent_name).toBe('billing-bot');
    const tools = new ToolCallReviewer(client, { framework: 'custom', agentName: 'shell-bot', wait: 1 });
    await tools.review({ toolName: 'run', input: { command: 'ls' } });
    expect((await client.listReviews({ task_type: 'custom:run' })).reviews[0].agent_name).toBe('shell-bot');
  });

  it('files once for two calls with the same idempotency key', async () => {
    await start();
    const first = await client.createReview({ task_type: 'twice', proposed_action: 'Send the invoice' }, { idempotencyKey: 'invoice-7' });
    const second = await client.createReview({ task_type: 'twice', proposed_action: 'Send the invoice' }, { idempotencyKey: 'invoice-7' });
    expect(second.id).toBe(first.id);
    expect((await client.listReviews({ task_type: 'twice' })).total).toBe(1);
  });

  it('throws the problem of a refused request instead of retrying it', async () => {
    await start();
    const refused = client.requestReview({ task_type: 'bad', proposed_action: 'x', confidence_score: 7 });
    await expect(refused).rejects.toBeInstanceOf(GreenlightError);
    await expect(refused).rejects.toMatchObject({ status: 400, problem: { errors: [expect.objectContaining({ field: 'confidence_score' })] } });
  });

  it('sends its API key, and a wrong key is a 401 it does not retry', async () => {
    await start({ enable_auth: true, api_key: 'a-key-of-twenty-chars' });
    expect((await client.createReview({ task_type: 'keyed', proposed_action: 'x' })).status).toBe('pending');
    const stranger = new GreenlightClient({ baseUrl: server.url, apiKey: 'not-the-key-at-all' });
    await expect(stranger.listReviews()).rejects.toMatchObject({ status: 401 });
  });

  it('gives up with GreenlightUnavailableError when nothing answers before the deadline, saying where it tried and what happened', async () => {
    // A port that was bound and closed again: nothing listens there.
    const port = await freePort();
    const nowhere = new GreenlightClient({ baseUrl: `http://127.0.0.1:${port}` });
    const refused = nowhere.requestReview({ task_type: 'void', proposed_action: 'x' }, { wait: 1 });
    await expect(refused).rejects.toBeInstanceOf(GreenlightUnavailableError);
    await expect(refused).rejects.toThrow(`Greenlight did not take the review before the deadline: could not connect to http://127.0.0.1:${port}: connection refused`);
  });

  it('names the URL and the refused connection when a call cannot reach Greenlight', async () => {
    const port = await freePort();
    const nowhere = new GreenlightClient({ baseUrl: `http://127.0.0.1:${port}/` });
    const read = nowhere.getReview(1);
    await expect(read).rejects.toBeInstanceOf(GreenlightConnectionError);
    await expect(read).rejects.toMatchObject({ url: `http://127.0.0.1:${port}`, message: `could not connect to http://127.0.0.1:${port}: connection refused` });
    await expect(nowhere.uploadAttachment(1, new Blob(['x']))).rejects.toThrow(`could not connect to http://127.0.0.1:${port}: connection refused`);
  });

  it('files a review with its attachments in one request, waits through server timeouts, and returns the decision with them listed', async () => {
    await start({ blocking_timeout_seconds: 1 });
    const file = path.join(server.dataDir, 'report.csv');
    fs.writeFileSync(file, 'month,revenue\nOctober,1042\n');
    const log = new RetryLog();
    const answer = client.requestReview(
      { task_type: 'with-files', proposed_action: 'Publish the October report' },
      {
        onRetry: log.record,
        attachments: [
          { path: file, contentType: 'text/csv' },
          { name: 'chart.png', contentType: 'image/png', data: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) },
          { name: 'summary.txt', data: 'Revenue up 4 %.' },
          { data: new Blob(['{"ok":true}'], { type: 'application/json' }), name: 'check.json' },
        ],
      },
    );
    const reviewId = await pendingReviewOf(server.url, 'with-files');
    // Whenever a reviewer can see the review, its files are there.
    expect((await client.listAttachments(reviewId)).count).toBe(4);
    // At least one 408 first: the decision then comes through a long-poll and a read of the review.
    await log.reached('timeout', 1);
    await decide(server.url, reviewId, { decision_type: 'approve' });

    const review = await answer;
    expect(review).toMatchObject({ id: reviewId, status: 'approved' });
    expect(review.attachments?.map((attachment) => [attachment.file_name, attachment.content_type, attachment.size_bytes])).toEqual([
      ['report.csv', 'text/csv', 27],
      ['chart.png', 'image/png', 4],
      ['summary.txt', 'text/plain', 15],
      ['check.json', 'application/json', 11],
    ]);
    expect((await client.listReviews({ task_type: 'with-files' })).total).toBe(1);
    expect(await (await client.downloadAttachment(review.attachments![0].id)).text()).toBe('month,revenue\nOctober,1042\n');
  });

  it('refuses attachments past the server\'s limits with the problem, filing nothing', async () => {
    await start({ max_attachments_per_review: 1 });
    const tooMany = client.requestReview({ task_type: 'too-many', proposed_action: 'x' }, { attachments: [{ name: 'a.txt', data: 'a' }, { name: 'b.txt', data: 'b' }] });
    await expect(tooMany).rejects.toMatchObject({ status: 413, problem: { detail: expect.stringContaining('max_attachments_per_review') } });
    expect((await client.listReviews({ task_type: 'too-many' })).total).toBe(0);
    await expect(client.createReview({ task_type: 'x', proposed_action: 'x' }, { attachments: [{ name: 'a.txt' }] })).rejects.toThrow('give data or path');
  });

  it('stops waiting, and frees the server\'s waiter, when the caller aborts', async () => {
    await start();
    const controller = new AbortController();
    const answer = client.requestReview({ task_type: 'abandoned', proposed_action: 'x' }, { signal: controller.signal });
    await expect.poll(() => server.test.waitingCount()).toBe(1);
    controller.abort();
    await expect(answer).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => server.test.waitingCount()).toBe(0);
  });

  it('decides, long-polls the decision, and takes feedback', async () => {
    await start();
    const review = await client.createReview({ task_type: 'refund', proposed_action: 'Refund EUR 40' });
    expect(await client.getDecision(review.id)).toBeNull();
    const polled = client.getDecision(review.id, { wait: 30 });
    const decision = await client.decide(review.id, { decision_type: 'modify', modified_action: 'Refund EUR 20', reviewer_name: 'dana' });
    expect(decision).toMatchObject({ decision_type: 'modify', modified_action: 'Refund EUR 20' });
    expect(await polled).toMatchObject({ decision_type: 'modify' });
    await expect(client.decide(review.id, { decision_type: 'approve', reviewer_name: 'eve' })).rejects.toMatchObject({
      status: 409,
      problem: { decision: { decision_type: 'modify' } },
    });
    await client.feedback(review.id, { rating: 5, comment: 'right call' });
    expect((await client.listFeedback(review.id)).feedback).toEqual([expect.objectContaining({ rating: 5, comment: 'right call' })]);
    expect((await client.getReview(review.id)).status).toBe('modified');
  });

  it('uploads attachments from a path and from a Blob, and downloads them', async () => {
    await start();
    const review = await client.createReview({ task_type: 'files', proposed_action: 'Publish the report' });
    const file = path.join(server.dataDir, 'report.txt');
    fs.writeFileSync(file, 'quarterly numbers\n');
    const fromPath = await client.uploadAttachment(review.id, file, { description: 'the report' });
    expect(fromPath).toMatchObject({ file_name: 'report.txt', size_bytes: 18, description: 'the report' });
    const fromBlob = await client.uploadAttachment(review.id, new Blob(['{"a":1}'], { type: 'application/json' }), { fileName: 'data.json' });
    expect(fromBlob).toMatchObject({ file_name: 'data.json', content_type: 'application/json', size_bytes: 7 });
    expect((await client.listAttachments(review.id)).count).toBe(2);
    expect(await (await client.downloadAttachment(fromPath.id)).text()).toBe('quarterly numbers\n');
  });

  it('iterates over live events, and resumes after the last one it saw', async () => {
    await start();
    const controller = new AbortController();
    const seen: GreenlightEvent[] = [];
    const stream = client.events({ signal: controller.signal });
    const first = stream.next();
    await expect.poll(() => server.test.openStreams()).toBe(1);
    const review = await client.createReview({ task_type: 'live', proposed_action: 'x' });
    seen.push((await first).value as GreenlightEvent);
    await client.decide(review.id, { decision_type: 'approve', reviewer_name: 'dana' });
    seen.push((await stream.next()).value as GreenlightEvent);
    controller.abort();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(seen.map((event) => [event.type, event.data.id])).toEqual([
      ['review.created', review.id],
      ['review.decided', review.id],
    ]);

    await client.feedback(review.id, { rating: 4 });
    const resumed = client.events({ lastEventId: seen[1].id });
    const missed = (await resumed.next()).value as GreenlightEvent;
    await resumed.return(undefined);
    expect(missed).toMatchObject({ type: 'feedback.created', data: { review_id: review.id, rating: 4 } });
  });

  it('reconnects a dropped event stream with Last-Event-ID and misses nothing', async () => {
    await start();
    const stream = client.events();
    const first = stream.next();
    await expect.poll(() => server.test.openStreams()).toBe(1);
    const review = await client.createReview({ task_type: 'dropped', proposed_action: 'x' });
    expect((await first).value).toMatchObject({ type: 'review.created', data: { id: review.id } });

    server.test.closeStreams();
    await expect.poll(() => server.test.openStreams()).toBe(0);
    await client.feedback(review.id, { comment: 'sent while no stream was open' });
    expect((await stream.next()).value).toMatchObject({ type: 'feedback.created', data: { review_id: review.id } });
    await stream.return(undefined);
  });

  it('reaches every operation of the OpenAPI document, typed, through `api`', async () => {
    await start();
    const { data } = await client.api.GET('/health');
    expect(data).toMatchObject({ status: 'healthy', service: 'greenlight' });
  });
});
