import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../server/http/openapi/document';
import type { Logger } from '../../server/logging';
import { gradientPng } from '../support/png';
import { SAMPLE_REVIEWS } from '../support/seed';
import { startTestServer, type TestServer } from '../support/server';
import { FIGURES_DIR, Tally, writeFigures } from './support/figures';
import { inParallel } from '../../bench/http';
import { fileUpload, multipartBody } from './support/multipart';
import { partialUploads } from './support/stored';
import { jsonOf, jsonRequest, type RawRequest, type RawResponse, send, sendAndHangUp } from '../support/raw-http';
import { type FuzzRequest, type OpenApiDocument, requestArbitrary, type ToolDescription, toolCallArbitrary } from './support/request-arbitraries';

const REQUESTS = 6_000;
const MCP_TOOL_CALLS = 600;
/** How long the client waits for an MCP tool call, which may rightly wait for a decision far longer. */
const TOOL_CALL_PATIENCE_MS = 3_000;
const CONCURRENCY = 16;
/** A failing run is replayed with CHAOS_SEED set to the seed its figures record. */
const SEED = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : Math.floor(Math.random() * 2 ** 31);
const MAX_UPLOAD_BYTES = 256 * 1024;
/** Ids the fuzzer's own creates will take after the seeded rows: aiming there reaches pending reviews. */
const FRESH_IDS_AHEAD = { review_id: 80, attachment_id: 40 };
const FAILURES_FILE = path.join(FIGURES_DIR, 'fuzz-failures.json');

interface Seeded {
  reviewIds: number[];
  attachmentId: number;
}

interface Snapshot {
  reviews: unknown[];
  feedback: unknown[][];
  attachment: unknown;
  attachmentSha256: string;
  attachmentListed: boolean;
}

type ViolationKind = 'status' | 'shape' | 'internals';

interface Violation {
  kind: ViolationKind;
  what: string;
  request: FuzzRequest;
  status?: number;
  answer: string;
  /** The server's log of the fault behind a 500, which tells one bug from another. */
  cause?: string;
}

let server: TestServer;
let seeded: Seeded;
let mcpSessionId: string;
let campaign: FuzzRequest[] = [];
let before: Snapshot;
let prototypeBefore: string[];
const statuses = new Tally();
const byOperation = new Tally();
const violations: Violation[] = [];
let durationMs = 0;
/** Errors that escaped every handler while the fuzzer ran (the server shares this process). */
const uncaught: string[] = [];
const recordUncaught = (error: unknown): void => {
  uncaught.push(error instanceof Error ? (error.stack ?? error.message).split('\n').slice(0, 3).join(' | ') : String(error));
};

/** The first line of a logged error and the first frame of its stack, with paths relative to the checkout. */
function faultSignature(stack: string): string {
  const [message, ...frames] = stack.split('\n');
  const frame = frames.find((line) => line.trim().startsWith('at '));
  return frame ? `${message} ${frame.trim().replaceAll(`${process.cwd()}/`, '')}` : message;
}

/** The server's "unexpected error" log lines, by `METHOD path`: it logs each before answering 500. */
const loggedFaults = new Map<string, string>();
const faultLog: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (_message, fields = {}) => loggedFaults.set(`${String(fields.method)} ${String(fields.path)}`, faultSignature(String(fields.error))),
};

async function expectAnswer(request: RawRequest, status: number): Promise<any> {
  const response = await send(server.url, request);
  if (response.status !== status) throw new Error(`seeding ${request.method} ${request.path}: ${response.status} ${response.body.toString()}`);
  return jsonOf(response);
}

/**
 * Reviews that are all decided already, so a fuzzed decide on one must be refused (409) and
 * change nothing; feedback on each and one attachment.
 */
async function seed(): Promise<Seeded> {
  const decisions = [
    { decision_type: 'approve', reviewer_name: 'dana@example.com', notes: 'Checked.' },
    { decision_type: 'reject', reviewer_id: 12, notes: 'Not without a ticket.' },
    { decision_type: 'modify', modified_action: 'Refund half now.', reviewer_name: 'sam@example.com' },
  ];
  const reviewIds: number[] = [];
  for (const [i, review] of SAMPLE_REVIEWS.entries()) {
    const { id } = await expectAnswer(jsonRequest('POST', '/reviews', review), 201);
    await expectAnswer(jsonRequest('POST', `/reviews/${id}/decide`, decisions[i % decisions.length]), 200);
    await expectAnswer(jsonRequest('POST', `/reviews/${id}/feedback`, { rating: 1 + (i % 5), comment: `Feedback on ${review.task_type}` }), 201);
    reviewIds.push(id);
  }
  const upload = fileUpload(gradientPng(), 'parcel-photo.png', 'image/png');
  const attachment = await expectAnswer({ method: 'POST', path: `/reviews/${reviewIds[0]}/attachments`, ...upload }, 201);
  return { reviewIds, attachmentId: attachment.id };
}

async function readJson(urlPath: string): Promise<any> {
  return jsonOf(await send(server.url, { method: 'GET', path: urlPath }));
}

async function snapshot(): Promise<Snapshot> {
  const { reviewIds, attachmentId } = seeded;
  const content = await send(server.url, { method: 'GET', path: `/attachments/${attachmentId}/download` });
  const listed = await readJson(`/reviews/${reviewIds[0]}/attachments`);
  return {
    reviews: await Promise.all(reviewIds.map((id) => readJson(`/reviews/${id}`))),
    feedback: await Promise.all(reviewIds.map(async (id) => (await readJson(`/reviews/${id}/feedback`)).feedback)),
    attachment: await readJson(`/attachments/${attachmentId}`),
    attachmentSha256: content.status === 200 ? createHash('sha256').update(content.body).digest('hex') : `status ${content.status}`,
    attachmentListed: listed.attachments.some((a: { id: number }) => a.id === attachmentId),
  };
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The JSON-RPC message in an MCP answer, sent as JSON or as one server-sent event. */
function rpcMessage(response: RawResponse): any {
  const text = response.body.toString('utf8');
  return JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null'));
}

/** An initialized MCP session and the tools it offers. */
async function openMcpSession(): Promise<{ sessionId: string; tools: ToolDescription[] }> {
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'chaos', version: '1' } } };
  const opened = await send(server.url, { ...jsonRequest('POST', '/mcp', initialize), headers: MCP_HEADERS });
  const sessionId = String(opened.headers['mcp-session-id']);
  const headers = { ...MCP_HEADERS, 'mcp-session-id': sessionId };
  await send(server.url, { ...jsonRequest('POST', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }), headers });
  const listed = await send(server.url, { ...jsonRequest('POST', '/mcp', { jsonrpc: '2.0', id: 2, method: 'tools/list' }), headers });
  return { sessionId, tools: rpcMessage(listed).result.tools };
}

/** Upload files the server has not finished with or thrown away. */
function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

/** The id a path value names as the server reads it (`01`, `1e0`, `%201` are all 1), or NaN. */
function idNamedBy(pathValue: string): number {
  try {
    return Number(decodeURIComponent(pathValue));
  } catch {
    return Number.NaN;
  }
}

/** Deleting the seeded attachment would be a legitimate change: the fuzzer does not aim a DELETE at it. */
function deletesSeededAttachment(request: FuzzRequest): boolean {
  const target = /^\/+attachments\/([^/?;]+)/i.exec(request.path)?.[1];
  return request.method === 'DELETE' && target !== undefined && idNamedBy(target) === seeded.attachmentId;
}

/** How often the corpus repeats a hang-up whose effect depends on timing. */
const TIMING_REPEATS = 20;

/**
 * Inputs earlier runs found faults with, sent on every run besides the generated ones: a
 * fault stays reported until it is fixed, whatever the seed.
 */
function regressionCorpus(): FuzzRequest[] {
  const reviewId = seeded.reviewIds[0];
  const boundary = 'corpus';
  const upload = (content: Buffer) => ({
    method: 'POST',
    path: `/reviews/${reviewId}/attachments`,
    operation: 'POST /reviews/{review_id}/attachments',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: content,
  });
  const fileAndDescription = multipartBody([{ name: 'file', fileName: 'a.txt', contentType: 'text/plain', content: Buffer.alloc(50_000, 120) }, { name: 'description', content: 'd' }], boundary);
  const get = (template: string, urlPath: string): FuzzRequest => ({ method: 'GET', path: urlPath, operation: `GET ${template}` });
  return [
    // The file part ends without its closing boundary, in a request that is otherwise complete.
    upload(fileAndDescription.subarray(0, 1_000)),
    // The client hangs up at once when the file part is sent whole, before the rest of the body.
    ...Array.from({ length: TIMING_REPEATS }, (_, i) => ({ ...upload(fileAndDescription), hangUp: { afterBytes: fileAndDescription.length - 10 - (i % 3) * 20, afterMs: 0 } })),
    // A body that says it is compressed and is not.
    { ...jsonRequest('POST', '/reviews', { task_type: 'refund', proposed_action: 'x' }), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, operation: 'POST /reviews' },
    // Integers the validator reads as Infinity.
    get('/reviews/{review_id}', '/reviews/1e309'),
    get('/attachments/{attachment_id}', '/attachments/-Infinity'),
    get('/reviews', '/reviews?agent_id=1e309'),
    get('/stats', '/stats?organization_id=1e309'),
    // NUL in a filter, which the SQLite dialect writes into the SQL text: over HTTP and over MCP.
    get('/reviews', '/reviews?task_type=a%00b'),
    {
      ...jsonRequest('POST', '/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_pending_reviews', arguments: { task_type: 'a\u0000b' } } }),
      headers: { ...MCP_HEADERS, 'mcp-session-id': mcpSessionId },
      operation: 'POST /mcp tools/call list_pending_reviews',
    },
  ];
}

function generateRequests(): FuzzRequest[] {
  const maxReview = Math.max(...seeded.reviewIds);
  const arbitrary = requestArbitrary(openApiDocument() as unknown as OpenApiDocument, {
    knownIds: {
      review_id: [...seeded.reviewIds, ...range(maxReview + 1, FRESH_IDS_AHEAD.review_id)],
      attachment_id: range(seeded.attachmentId, FRESH_IDS_AHEAD.attachment_id + 1),
    },
    maxUploadBytes: MAX_UPLOAD_BYTES,
  });
  return fc.sample(arbitrary.filter((request) => !deletesSeededAttachment(request)), { numRuns: REQUESTS, seed: SEED });
}

/** How SQLite and Sequelize word their errors: a client is told what it did wrong, never those. */
const DATABASE_ERROR_TEXT = /SQLITE_[A-Z]+|Sequelize[A-Za-z]*Error/;

/** What is wrong with an answer, by the API's contract: 2xx or 4xx only, every 4xx an RFC 9457 problem document. */
function violationOf(request: FuzzRequest, response: RawResponse): Pick<Violation, 'kind' | 'what'> | undefined {
  const { status } = response;
  if (status >= 500) return { kind: 'status', what: `answered ${status}` };
  const text = response.body.toString('utf8');
  // Only answers that report an error: records and documents may quote such words as data.
  const reportsError = status >= 400 || (request.path === '/mcp' && /"isError":true|"error":\{/.test(text));
  const internals = reportsError ? DATABASE_ERROR_TEXT.exec(text)?.[0] : undefined;
  if (internals) return { kind: 'internals', what: `${status} showing the database's error text "${internals}"` };
  if (status < 200 || (status >= 300 && status < 400)) return { kind: 'status', what: `answered ${status}, neither 2xx nor 4xx` };
  if (status < 400) return undefined;
  const type = String(response.headers['content-type'] ?? '');
  const body = jsonOf<{ status?: unknown; detail?: unknown; error?: { message?: unknown } }>(response);
  if (type.startsWith('application/problem+json')) {
    if (typeof body?.detail !== 'string') return { kind: 'shape', what: `${status} problem without a string detail` };
    return body.status === status ? undefined : { kind: 'shape', what: `${status} problem whose status member says ${String(body.status)}` };
  }
  // /mcp speaks JSON-RPC: the transport's refusals are JSON-RPC error objects.
  if (request.path === '/mcp' && typeof body?.error?.message === 'string') return undefined;
  return { kind: 'shape', what: `${status} as ${type || 'no content type'}, not application/problem+json` };
}

function count(request: FuzzRequest, outcome: string | number): void {
  statuses.add(outcome);
  byOperation.add(`${request.operation} → ${outcome}`);
}

async function fire(request: FuzzRequest): Promise<void> {
  if (request.hangUp) {
    await sendAndHangUp(server.url, request, request.hangUp.afterBytes, request.hangUp.afterMs);
    count(request, 'client hung up');
    return;
  }
  let response: RawResponse;
  try {
    response = await send(server.url, request, request.mayWait ? { timeoutMs: TOOL_CALL_PATIENCE_MS } : {});
  } catch (error) {
    if (request.mayWait) {
      count(request, 'client gave up waiting');
      return;
    }
    count(request, 'no answer');
    violations.push({ kind: 'status', what: `no answer (${(error as Error).message})`, request, answer: '' });
    return;
  }
  count(request, response.status);
  const violation = violationOf(request, response);
  if (!violation) return;
  const cause = response.status >= 500 ? loggedFaults.get(`${request.method} ${request.path.split('?')[0]}`) : undefined;
  violations.push({ ...violation, request, status: response.status, answer: response.body.subarray(0, 300).toString('utf8'), cause });
}

function describeRequest(request: FuzzRequest): string {
  const body = request.body === undefined ? '' : ` body(${request.body.length} B)=${JSON.stringify(request.body.subarray(0, 200).toString('latin1'))}`;
  return `${request.method} ${request.path.slice(0, 200)} headers=${JSON.stringify(request.headers)}${body}`;
}

const sizeOf = (request: FuzzRequest): number => request.path.length + (request.body?.length ?? 0);

/**
 * One line per distinct fault — by the server's logged cause where there is one, else by
 * operation — naming the operations it hit and the smallest request that shows it.
 */
function report(kind: ViolationKind): string[] {
  const groups = new Map<string, Violation[]>();
  for (const violation of violations.filter((v) => v.kind === kind)) {
    const key = violation.cause ? `${violation.what} (server log: ${violation.cause})` : `${violation.request.operation}: ${violation.what}`;
    groups.set(key, [...(groups.get(key) ?? []), violation]);
  }
  return [...groups].map(([key, group]) => {
    const operations = [...new Set(group.map((v) => v.request.operation))];
    const smallest = group.reduce((best, v) => (sizeOf(v.request) < sizeOf(best.request) ? v : best));
    return `${group.length}× ${key} on ${operations.join(', ')} — e.g. ${describeRequest(smallest.request)} → ${smallest.answer}`;
  });
}

/** Every failing request in full (body in base64), to replay it byte for byte. */
function saveFailures(): void {
  fs.mkdirSync(FIGURES_DIR, { recursive: true });
  const failures = violations.map(({ request, what, status, answer, cause }) => ({
    what,
    status,
    answer,
    cause,
    method: request.method,
    path: request.path,
    headers: request.headers,
    body_base64: request.body?.toString('base64'),
  }));
  fs.writeFileSync(FAILURES_FILE, `${JSON.stringify({ seed: SEED, failures }, null, 2)}\n`);
}

beforeAll(async () => {
  prototypeBefore = Object.getOwnPropertyNames(Object.prototype);
  process.on('uncaughtException', recordUncaught);
  process.on('unhandledRejection', recordUncaught);
  // A blocking create or a long-poll holds a request for at most a second.
  server = await startTestServer({ blocking_timeout_seconds: 1, max_attachment_bytes: MAX_UPLOAD_BYTES }, { log: faultLog });
  seeded = await seed();
  before = await snapshot();
  const mcp = await openMcpSession();
  mcpSessionId = mcp.sessionId;
  const toolCalls = fc.sample(toolCallArbitrary(mcp.tools, mcp.sessionId), { numRuns: MCP_TOOL_CALLS, seed: SEED });
  campaign = [...regressionCorpus(), ...generateRequests(), ...toolCalls];
  const started = Date.now();
  await inParallel(campaign, CONCURRENCY, fire);
  durationMs = Date.now() - started;
  // Ending the session ends the tool calls still waiting for decisions.
  await send(server.url, { method: 'DELETE', path: '/mcp', headers: { 'mcp-session-id': mcpSessionId } });
}, 240_000);

afterAll(async () => {
  process.off('uncaughtException', recordUncaught);
  process.off('unhandledRejection', recordUncaught);
  saveFailures();
  writeFigures('fuzz', {
    seed: SEED,
    inputs_tried: statuses.sum(),
    concurrency: CONCURRENCY,
    duration_ms: durationMs,
    server_errors: statuses.sum((status) => /^5\d\d$/.test(status)),
    uncaught_exceptions: uncaught.length,
    partial_uploads_left: partialUploads(server.dataDir).length,
    violations: violations.length,
    status_histogram: statuses,
    by_operation: byOperation,
    failures_file: path.relative(process.cwd(), FAILURES_FILE),
  });
  await server?.dispose();
});

describe(`fuzzing every endpoint with ${REQUESTS} generated requests and ${MCP_TOOL_CALLS} MCP tool calls`, () => {
  it('sent every generated request', () => {
    expect(campaign.length).toBeGreaterThan(REQUESTS + MCP_TOOL_CALLS);
    expect(statuses.sum()).toBe(campaign.length);
  });

  it('throws no uncaught exception and leaves no rejection unhandled: either would end `greenlight start`', () => {
    expect(uncaught).toEqual([]);
  });

  it('answers each one with a 2xx or a 4xx: never a 5xx, never a dropped connection', () => {
    expect(report('status')).toEqual([]);
  });

  it('explains every 4xx as application/problem+json with a string detail and its own status', () => {
    expect(report('shape')).toEqual([]);
  });

  it("never shows a client the database's own error text", () => {
    expect(report('internals')).toEqual([]);
  });

  it('leaves the reviews, decisions, feedback and attachment seeded before unchanged', async () => {
    const after = await snapshot();
    expect(after.reviews).toEqual(before.reviews);
    // Feedback may legitimately have been added; what was there stays, first and as it was.
    expect(after.feedback.map((entries, i) => entries.slice(0, before.feedback[i].length))).toEqual(before.feedback);
    expect(after.attachment).toEqual(before.attachment);
    expect(after.attachmentSha256).toBe(before.attachmentSha256);
    expect(after.attachmentListed).toBe(true);
  });

  it('leaves Object.prototype unpolluted by __proto__ and constructor keys', () => {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeBefore);
  });

  it('holds no waiter, event stream or partial upload once its clients have gone', async () => {
    await expect.poll(() => server.test.waitingCount()).toBe(0);
    await expect.poll(() => server.test.openStreams()).toBe(0);
    await expect.poll(() => partialUploads(server.dataDir)).toEqual([]);
  });

  it('is still up and healthy afterwards', async () => {
    const health = await send(server.url, { method: 'GET', path: '/health' });
    expect(health.status).toBe(200);
    expect(jsonOf(health)).toMatchObject({ status: 'healthy', database: 'ok' });
  });
});
