import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_WITHIN_SECONDS } from '../../server/mcp/tools';
import { send } from '../support/raw-http';
import { callTool, describeReviewTools, startBlockingReview, textOf } from '../support/mcp';
import { call, eventually, startTestServer, type TestServer } from '../support/server';

const KEY = 'mcp-test-key-0123456789';
const OPERATOR_KEY = 'operator-key-for-mcp-hosted-tests-0123456789';
const ANSWER_WITHIN_SECONDS_IN_TESTS = 1;

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

interface RpcAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The JSON-RPC answer: the body itself, or the event of a stream that carries an id. */
  message: any;
}

/** Who sends a raw request: from another address of this machine (another client), with a key. */
interface Sender {
  localAddress?: string;
  headers?: Record<string, string>;
}

const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** One JSON-RPC POST to /mcp over node:http. */
async function rpcPost(apiUrl: string, body: unknown, sessionId?: string, { localAddress, headers: own }: Sender = {}): Promise<RpcAnswer> {
  const headers: Record<string, string> = { ...MCP_HEADERS, ...own, ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } : {}) };
  const agent = localAddress ? new http.Agent({ localAddress } as http.AgentOptions) : undefined;
  const response = await send(apiUrl, { method: 'POST', path: '/mcp', headers, body: Buffer.from(JSON.stringify(body)) }, { agent });
  agent?.destroy();
  const text = response.body.toString('utf8');
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]));
  const message = text.startsWith('{') ? JSON.parse(text) : events.find((event) => event.id !== undefined);
  return { status: response.status, headers: response.headers, message };
}

/** A session opened as a bare client does: initialize and nothing more, no stream left open. */
async function openRawSession(apiUrl: string, sender?: Sender): Promise<string> {
  const opened = await rpcPost(apiUrl, INITIALIZE, undefined, sender);
  expect(opened.status, JSON.stringify(opened.message)).toBe(200);
  const sessionId = String(opened.headers['mcp-session-id']);
  await rpcPost(apiUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId, sender);
  return sessionId;
}

const listTools = (apiUrl: string, sessionId: string, sender?: Sender) => rpcPost(apiUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, sessionId, sender);

/**
 * Opens the session's standalone event stream, which keeps it in use until `close`. Its body is
 * taken by a reader: fetch cancels a body nobody has read or locked once its Response is garbage
 * collected, which would end the stream, and free the session, whenever the collector ran.
 */
async function holdStream(apiUrl: string, sessionId: string, headers: Record<string, string> = {}): Promise<{ close(): void }> {
  const controller = new AbortController();
  const response = await fetch(`${apiUrl}/mcp`, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18', ...headers },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  return {
    close: () => {
      reader.cancel().catch(() => {});
      controller.abort();
    },
  };
}

async function connect(apiUrl: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'greenlight-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

describe('/mcp on the API', () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer({}, { mcpTools: { progressIntervalMs: 50, answerWithinSeconds: ANSWER_WITHIN_SECONDS_IN_TESTS, taskPollIntervalMs: 50 } });
    ({ client } = await connect(server.url));
  });

  afterAll(async () => {
    await client?.close();
    await server?.dispose();
  });

  describeReviewTools('Streamable HTTP', () => ({ client, apiUrl: server.url, answerWithinSeconds: ANSWER_WITHIN_SECONDS_IN_TESTS }));

  it('holds a call without a progress token for less than the SDK client\'s default request timeout', () => {
    expect(ANSWER_WITHIN_SECONDS * 1000).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC);
  });

  it('frees the wait of a task the client cancels; the review stays pending', async () => {
    await client.listTools(); // which tools take tasks
    const stream = client.experimental.tasks.callToolStream({ name: 'request_review', arguments: { task_type: 'email', proposed_action: 'Send the winter newsletter' } });
    const created = await stream.next();
    if (created.value?.type !== 'taskCreated') throw new Error(`no task created: ${JSON.stringify(created.value)}`);
    const { taskId, statusMessage } = created.value.task;
    const reviewId = Number(/Review (\d+)/.exec(statusMessage ?? '')?.[1]);
    await eventually(() => server.test.waitingCount() === 1, 5_000, 'the task to wait');
    expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
    await eventually(() => server.test.waitingCount() === 0, 5_000, 'the waiter to be released');
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`)).body.status).toBe('pending');
    await stream.return(undefined);
  });

  it('keeps reporting progress while a person has not decided yet', async () => {
    const waiting = await startBlockingReview(client, { task_type: 'deploy', proposed_action: 'Deploy build 77 to production' });
    await eventually(() => waiting.progress.length >= 4, 5_000, 'four progress notifications');
    const values = waiting.progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(waiting.progress.at(-1)?.message).toMatch(/Still waiting for a decision on review \d+/);
    await call(server.url, 'POST', `/reviews/${waiting.id}/decide`, { decision_type: 'approve' });
    expect(textOf(await waiting.result)).toMatch(/^approved/);
  });

  it('frees the wait at once when the client cancels the call; the review stays pending', async () => {
    const controller = new AbortController();
    let first!: () => void;
    const started = new Promise<void>((resolve) => (first = resolve));
    let reviewId = 0;
    const cancelled = client
      .callTool({ name: 'request_review', arguments: { task_type: 'email', proposed_action: 'Send the newsletter' } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          reviewId = Number(/Review (\d+)/.exec(p.message ?? '')?.[1]);
          first();
        },
      })
      .catch((error: Error) => error);
    await started;
    expect(server.test.waitingCount()).toBe(1);
    controller.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    await eventually(() => server.test.waitingCount() === 0, 5_000, 'the waiter to be released');
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`)).body.status).toBe('pending');
  });

  it('ends a session on DELETE and refuses an unknown session id', async () => {
    const second = await connect(server.url);
    expect(server.test.mcpSessions()).toBe(2);
    const sessionId = second.transport.sessionId!;
    await second.transport.terminateSession();
    await second.client.close();
    expect(server.test.mcpSessions()).toBe(1);
    const stale = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    expect((await stale.json()).error.message).toMatch(/Session not found/);
  });

  it('opens no session for a request that is not an initialize request', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(400);
    expect(server.test.mcpSessions()).toBe(1);
  });

  it('keeps request_review within the limits of the REST API\'s ReviewCreate schema', async () => {
    const { tools } = await client.listTools();
    const input = tools.find((tool) => tool.name === 'request_review')!.inputSchema.properties as Record<string, Record<string, unknown>>;
    const document = (await call(server.url, 'GET', '/openapi.json')).body;
    const create = document.components.schemas.ReviewCreate.properties as Record<string, Record<string, unknown>>;
    const urgencies = document.components.schemas.Urgency.enum;
    /** The constraints of a property, whether written plainly or as `anyOf [type, null]`. */
    const limits = (schema: Record<string, unknown>) => {
      const plain = ((schema.anyOf as Array<Record<string, unknown>> | undefined)?.find((s) => s.type !== 'null') ?? schema) as Record<string, unknown>;
      const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => plain[k] !== undefined).map((k) => [k, plain[k]]));
      return pick(['type', 'minLength', 'maxLength', 'minimum', 'maximum', 'enum']);
    };
    for (const [name, schema] of Object.entries(create)) {
      expect(input[name], name).toBeDefined();
      if (name === 'urgency') expect(limits(input[name]).enum).toEqual(urgencies);
      else expect(limits(input[name]), name).toEqual(limits(schema));
    }
    // MCP's own fields: how long to wait, files as base64 (REST sends them as multipart parts), and the other names agents written for the source project's tool send.
    expect(Object.keys(input).filter((name) => !(name in create)).sort()).toEqual(['attachments', 'confidence', 'reasoning', 'wait_seconds']);
    expect(limits(input.reasoning)).toEqual(limits(create.agent_reasoning));
    expect(limits(input.confidence)).toEqual(limits(create.confidence_score));
  });

  it('answers a waiting call with "pending" when the server shuts down', async () => {
    const own = await startTestServer({}, { mcpTools: { progressIntervalMs: 1_000 } });
    const { client: ownClient } = await connect(own.url);
    try {
      const waiting = await startBlockingReview(ownClient, { task_type: 'deploy', proposed_action: 'Deploy build 78' });
      await own.close();
      const text = textOf(await waiting.result);
      expect(text).toMatch(new RegExp(`^pending\\nStopped waiting for review ${waiting.id} because Greenlight is shutting down`));
      expect(own.test.mcpSessions()).toBe(0);
    } finally {
      await ownClient.close().catch(() => {});
      await own.dispose();
    }
  });
});

describe('/mcp requests a client gets wrong', () => {
  let server: TestServer;
  let sessionId: string;

  beforeAll(async () => {
    server = await startTestServer({}, { mcpTools: { progressIntervalMs: 50 } });
    sessionId = await openRawSession(server.url);
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('answers every one of 50 requests sent at once with the same id: one is served, the others refused at once', async () => {
    const review = (await call(server.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 80' })).body;
    const waitForIt = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_review_decision', arguments: { review_id: review.id, wait_seconds: 60 }, _meta: { progressToken: 'wait-7' } },
    };
    const answered: RpcAnswer[] = [];
    const answers = Array.from({ length: 50 }, () => rpcPost(server.url, waitForIt, sessionId).then((answer) => (answered.push(answer), answer)));
    await eventually(() => answered.length === 49, 15_000, 'all requests but the one in progress to be answered');
    await call(server.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' });
    const all = await Promise.all(answers);

    const served = all.filter((answer) => answer.message?.result);
    expect(served).toHaveLength(1);
    expect(served[0].message.result.structuredContent).toMatchObject({ review_id: review.id, status: 'approved' });
    const refused = all.filter((answer) => answer.message?.error);
    expect(refused).toHaveLength(49);
    for (const { status, message } of refused) {
      expect(status).toBe(400);
      expect(message).toMatchObject({ id: 7, error: { code: -32600, message: expect.stringContaining('a request with id 7 is already in progress in this session') } });
    }
    // Once answered, the id is free again.
    const reused = await rpcPost(server.url, { ...waitForIt, params: { name: 'check_review_status', arguments: { review_id: review.id } } }, sessionId);
    expect(reused.message.result.structuredContent.status).toBe('approved');
  });

  it('answers requests whose params are not of the protocol\'s shape with -32602, naming the field', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ method: 'tools/call', params: 'check_review_status' }, /^Invalid params: params: expected object/],
      [{ method: 'tools/call', params: { name: 'check_review_status', arguments: { review_id: 1 }, _meta: { progressToken: { a: 1 } } } }, /params\._meta\.progressToken: expected string or number/],
      [{ method: 'tools/call', params: { arguments: {} } }, /^Invalid params: params\.name: expected string/],
      [{ method: 'tools/list', params: { cursor: 5 } }, /^Invalid params: params\.cursor: expected string/],
    ];
    let id = 100;
    for (const [request, names] of cases) {
      const answer = await rpcPost(server.url, { jsonrpc: '2.0', id: ++id, ...request }, sessionId);
      expect(answer.message, JSON.stringify(request)).toMatchObject({ id, error: { code: -32602, message: expect.stringMatching(names) } });
      expect(answer.message.error.message).not.toContain('\n');
    }
    expect((await rpcPost(server.url, { jsonrpc: '2.0', id: ++id, method: 'tools/list' }, sessionId)).message.result.tools).toHaveLength(5);
  });

  it('refuses a body over the limit with 413, whether or not it says its length, and the session goes on', async () => {
    const padding = 'x'.repeat(1024 * 1024);
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { padding } } }));
    const headers = { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const framings: Array<Record<string, string>> = [{}, { 'transfer-encoding': 'chunked' }];
    for (const framing of framings) {
      const response = await send(server.url, { method: 'POST', path: '/mcp', headers: { ...headers, ...framing }, body });
      expect(response.status).toBe(413);
      expect(JSON.parse(response.body.toString('utf8')).error.message).toMatch(/must not exceed 1048576 bytes/);
    }
    expect((await rpcPost(server.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId)).message.result.tools).toHaveLength(5);
  });

  it('refuses an unparseable body with -32700', async () => {
    const headers = { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const response = await send(server.url, { method: 'POST', path: '/mcp', headers, body: Buffer.from('{"jsonrpc": "2.0", "id": 1,') });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ id: null, error: { code: -32700 } });
  });

});

describe('/mcp when max_waiting_requests already wait', () => {
  it('stores the review and answers "pending" at once instead of waiting past the limit', async () => {
    const own = await startTestServer({ max_waiting_requests: 1 });
    const { client: ownClient } = await connect(own.url);
    try {
      const held = call(own.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 79', blocking: true });
      await eventually(() => own.test.waitingCount() === 1, 5_000, 'the blocking create to wait');
      const text = textOf(await callTool(ownClient, 'request_review', { task_type: 'email', proposed_action: 'Send the newsletter' }));
      const id = Number(/review (\d+)/.exec(text)?.[1]);
      expect(text).toMatch(/^pending\nStopped waiting for review \d+ because Greenlight already holds max_waiting_requests waiting requests/);
      expect((await call(own.url, 'GET', `/reviews/${id}`)).body).toMatchObject({ status: 'pending', proposed_action: 'Send the newsletter' });
      expect(own.test.waitingCount()).toBe(1);
      const heldId = (await call(own.url, 'GET', '/reviews?task_type=deploy')).body.reviews[0].id;
      await call(own.url, 'POST', `/reviews/${heldId}/decide`, { decision_type: 'approve' });
      expect((await held).body).toMatchObject({ id: heldId, status: 'approved' });
    } finally {
      await ownClient.close().catch(() => {});
      await own.dispose();
    }
  });
});

describe('/mcp with authentication on', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.dispose();
  });

  it('refuses a request without the key and serves one with it', async () => {
    server = await startTestServer({ enable_auth: true, api_key: KEY });
    const anonymous = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expect(connect(server.url)).rejects.toThrow();
    await expect(connect(server.url, { authorization: 'Bearer wrong-key-0123456789' })).rejects.toThrow();
    expect(server.test.mcpSessions()).toBe(0);

    const { client } = await connect(server.url, { authorization: `Bearer ${KEY}` });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(5);
    await client.close();
  });
});

describe('/mcp sessions per client', () => {
  const OTHER_CLIENT = { localAddress: '127.0.0.2' };
  let server: TestServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await startTestServer({}, { mcpTools: { progressIntervalMs: 50 }, mcpSessionLimits: { maxSessionsPerCaller: 3 } });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await server?.dispose();
  });

  it('make room by ending a client\'s least recently used session that holds no connection', async () => {
    const [oldest, ...newer] = [await openRawSession(server.url, OTHER_CLIENT), await openRawSession(server.url, OTHER_CLIENT), await openRawSession(server.url, OTHER_CLIENT)];
    const fourth = await openRawSession(server.url, OTHER_CLIENT);
    const list = (sessionId: string) => listTools(server.url, sessionId, OTHER_CLIENT);
    expect((await list(oldest)).status).toBe(404);
    for (const sessionId of [...newer, fourth]) expect((await list(sessionId)).message.result.tools).toHaveLength(5);
    for (const sessionId of [...newer, fourth]) await send(server.url, { method: 'DELETE', path: '/mcp', headers: { 'mcp-session-id': sessionId } });
  });

  it('refuse a client whose every session is in use with 429, while another client still opens one', async () => {
    const waiting = [];
    for (let i = 0; i < 3; i++) {
      const { client } = await connect(server.url);
      clients.push(client);
      waiting.push(await startBlockingReview(client, { task_type: 'deploy', proposed_action: `Deploy build ${90 + i}` }));
    }
    const refused = await rpcPost(server.url, INITIALIZE);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.message.error.message).toMatch(/too many open MCP sessions from this client \(3\).*DELETE/);

    const other = await openRawSession(server.url, OTHER_CLIENT);
    expect((await listTools(server.url, other, OTHER_CLIENT)).message.result.tools).toHaveLength(5);

    for (const { id } of waiting) await call(server.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve' });
    for (const { result } of waiting) expect(textOf(await result)).toMatch(/^approved/);
    const transport = clients[0].transport as StreamableHTTPClientTransport;
    await transport.terminateSession();
    expect((await rpcPost(server.url, INITIALIZE)).status).toBe(200);
  });
});

describe('/mcp sessions in the hosted edition', () => {
  let hosted: TestServer;
  const streams: Array<{ close(): void }> = [];

  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await hosted?.dispose();
  });

  /** A new organization's admin key and an agent key (with its id), as senders of raw requests. */
  async function organization(name: string): Promise<{ admin: Sender; agent: Sender; agentKeyId: number }> {
    const created = await call(hosted.url, 'POST', '/organizations', { name }, { headers: bearer(OPERATOR_KEY) });
    const admin = bearer(created.body.api_key.key);
    const agent = await call(hosted.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: admin });
    return { admin: { headers: admin }, agent: { headers: bearer(agent.body.key) }, agentKeyId: agent.body.id };
  }

  /** A session kept in use by its open event stream, as a connected client keeps it. */
  async function busySession(sender: Sender): Promise<void> {
    streams.push(await holdStream(hosted.url, await openRawSession(hosted.url, sender), sender.headers));
  }

  it('one organization at its cap, every session in use, does not stop another from opening one', async () => {
    hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { mcpSessionLimits: { maxSessions: 4, maxSessionsPerTenant: 3, maxSessionsPerCaller: 2 } });
    const [busy, newcomer] = [await organization('Busy'), await organization('Newcomer')];
    for (const sender of [busy.admin, busy.admin, busy.agent]) await busySession(sender);

    const overKey = await rpcPost(hosted.url, INITIALIZE, undefined, busy.admin);
    expect(overKey.status).toBe(429);
    expect(overKey.message.error.message).toMatch(/too many open MCP sessions of this API key \(2\)/);
    const overOrganization = await rpcPost(hosted.url, INITIALIZE, undefined, busy.agent);
    expect(overOrganization.status).toBe(429);
    expect(Number(overOrganization.headers['retry-after'])).toBeGreaterThan(0);
    expect(overOrganization.message.error.message).toMatch(/too many open MCP sessions of this organization \(3\), each with a request in progress/);

    const opened = await openRawSession(hosted.url, newcomer.agent);
    expect((await listTools(hosted.url, opened, newcomer.agent)).message.result.tools).toHaveLength(5);
  });

  it('at the process\'s cap, the organization holding the most sessions gives up its least recently used idle one', async () => {
    hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { mcpSessionLimits: { maxSessions: 4, maxSessionsPerTenant: 3, maxSessionsPerCaller: 3 } });
    const [small, large, newcomer] = [await organization('Small'), await organization('Large'), await organization('Newcomer')];
    // The small organization's session is the least recently used of all, and idle too.
    const smalls = await openRawSession(hosted.url, small.agent);
    const [oldest, ...newer] = [await openRawSession(hosted.url, large.agent), await openRawSession(hosted.url, large.agent), await openRawSession(hosted.url, large.agent)];

    const opened = await openRawSession(hosted.url, newcomer.agent);
    expect((await listTools(hosted.url, opened, newcomer.agent)).message.result.tools).toHaveLength(5);
    expect((await listTools(hosted.url, oldest, large.agent)).status).toBe(404);
    for (const sessionId of newer) expect((await listTools(hosted.url, sessionId, large.agent)).message.result.tools).toHaveLength(5);
    expect((await listTools(hosted.url, smalls, small.agent)).message.result.tools).toHaveLength(5);
  });
  it('closes the sessions of a revoked API key, cancelling their calls under way, while another key\'s session goes on', async () => {
    hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { mcpTools: { progressIntervalMs: 50 } });
    const acme = await organization('Acme');
    const [doomed, kept] = [await openRawSession(hosted.url, acme.agent), await openRawSession(hosted.url, acme.admin)];
    const review = (await call(hosted.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 81' }, { headers: acme.admin.headers })).body;
    const waitForIt = { name: 'get_review_decision', arguments: { review_id: review.id, wait_seconds: 600 }, _meta: { progressToken: 'wait' } };
    const waiting = rpcPost(hosted.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: waitForIt }, doomed, acme.agent);
    await eventually(() => hosted.test.waitingCount() === 1, 5_000, 'the call to wait');

    expect((await call(hosted.url, 'DELETE', `/api-keys/${acme.agentKeyId}`, undefined, { headers: acme.admin.headers })).status).toBe(204);
    expect((await waiting).message).toBeUndefined();
    expect(hosted.test.mcpSessions()).toBe(1);
    await eventually(() => hosted.test.waitingCount() === 0, 5_000, 'the wait to be released');
    expect((await listTools(hosted.url, kept, acme.admin)).message.result.tools).toHaveLength(5);
  });
});

describe('/mcp sessions per client address (self-hosted edition)', () => {
  it('at the process\'s cap, the address holding the most sessions gives up its least recently used idle one', async () => {
    const own = await startTestServer({}, { mcpSessionLimits: { maxSessions: 3, maxSessionsPerCaller: 2 } });
    try {
      const [small, large, newcomer] = [{ localAddress: '127.0.0.2' }, { localAddress: '127.0.0.3' }, { localAddress: '127.0.0.4' }];
      const smalls = await openRawSession(own.url, small);
      const [oldest, newer] = [await openRawSession(own.url, large), await openRawSession(own.url, large)];

      const opened = await openRawSession(own.url, newcomer);
      expect((await listTools(own.url, opened, newcomer)).message.result.tools).toHaveLength(5);
      expect((await listTools(own.url, oldest, large)).status).toBe(404);
      for (const [sessionId, sender] of [[newer, large], [smalls, small]] as const) expect((await listTools(own.url, sessionId, sender)).message.result.tools).toHaveLength(5);
    } finally {
      await own.dispose();
    }
  });
  it('counts the clients behind a trusted proxy (the dashboard, a load balancer) apart, by the address it names', async () => {
    const own = await startTestServer({}, { mcpSessionLimits: { maxSessionsPerCaller: 1 } });
    try {
      const [first, second] = ['203.0.113.1', '203.0.113.2'].map((address) => ({ headers: { 'x-forwarded-for': address } }));
      const [firsts, seconds] = [await openRawSession(own.url, first), await openRawSession(own.url, second)];
      // Counted as one client, the second would have taken the first's place.
      for (const [sessionId, sender] of [[firsts, first], [seconds, second]] as const) expect((await listTools(own.url, sessionId, sender)).message.result.tools).toHaveLength(5);
    } finally {
      await own.dispose();
    }
  });
});

describe('/mcp in the hosted edition, where two approvals are required', () => {
  let hosted: TestServer;

  beforeAll(async () => {
    hosted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY }, { mcpTools: { progressIntervalMs: 50, answerWithinSeconds: 20, taskPollIntervalMs: 50 } });
  });
  afterAll(() => hosted?.dispose());

  it('answers request_review with the final decision only, not the first vote', async () => {
    const created = await call(hosted.url, 'POST', '/organizations', { name: 'Two Keys', settings: { require_two_approvals: true } }, { headers: bearer(OPERATOR_KEY) });
    const admin = bearer(created.body.api_key.key);
    const agentKey = (await call(hosted.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: admin })).body.key;
    const [first, second] = await Promise.all(
      ['first', 'second'].map(async (name) => (await call(hosted.url, 'POST', '/users', { email: `${name}@twokeys.example`, name, role: 'reviewer' }, { headers: admin })).body.id as number),
    );
    const { client } = await connect(hosted.url, bearer(agentKey));
    try {
      const { id, progress, result } = await startBlockingReview(client, { task_type: 'payout', proposed_action: 'Pay invoice 88 (EUR 12,000.00)' });
      let answered = false;
      void result.then(() => (answered = true));
      const voted = await call(hosted.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve', reviewer_id: first }, { headers: admin });
      expect(voted.status).toBe(202);
      // The tool keeps waiting through the first vote: more progress, no answer.
      const seen = progress.length;
      await eventually(() => progress.length > seen + 2, 5_000, 'progress after the first vote');
      expect(answered).toBe(false);
      expect((await call(hosted.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve', reviewer_id: second }, { headers: admin })).status).toBe(200);
      const final = await result;
      expect(final.structuredContent).toMatchObject({ review_id: id, status: 'approved', decision: { reviewer_name: 'second' } });
    } finally {
      await client.close();
    }
  });
});
