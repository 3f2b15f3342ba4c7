import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callTool, describeReviewTools, startBlockingReview, textOf } from '../support/mcp';
import { call, eventually, startTestServer, type TestServer } from '../support/server';

const KEY = 'mcp-test-key-0123456789';

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
    server = await startTestServer({}, { mcpProgressIntervalMs: 50 });
    ({ client } = await connect(server.url));
  });

  afterAll(async () => {
    await client?.close();
    await server?.dispose();
  });

  describeReviewTools('Streamable HTTP', () => ({ client, apiUrl: server.url }));

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
    expect(server.services.waiters.count).toBe(1);
    controller.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    await eventually(() => server.services.waiters.count === 0, 5_000, 'the waiter to be released');
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`)).body.status).toBe('pending');
  });

  it('ends a session on DELETE and refuses an unknown session id', async () => {
    const second = await connect(server.url);
    expect(server.mcpSessions.size).toBe(2);
    const sessionId = second.transport.sessionId!;
    await second.transport.terminateSession();
    await second.client.close();
    expect(server.mcpSessions.size).toBe(1);
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
    expect(server.mcpSessions.size).toBe(1);
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
  });

  it('answers a waiting call with "pending" when the server shuts down', async () => {
    const own = await startTestServer({}, { mcpProgressIntervalMs: 1_000 });
    const { client: ownClient } = await connect(own.url);
    try {
      const waiting = await startBlockingReview(ownClient, { task_type: 'deploy', proposed_action: 'Deploy build 78' });
      await own.close();
      const text = textOf(await waiting.result);
      expect(text).toMatch(new RegExp(`^pending\\nStopped waiting for review ${waiting.id} because Greenlight is shutting down`));
      expect(own.mcpSessions.size).toBe(0);
    } finally {
      await ownClient.close().catch(() => {});
      await own.dispose();
    }
  });
});

describe('/mcp when max_waiting_requests already wait', () => {
  it('stores the review and answers "pending" at once instead of waiting past the limit', async () => {
    const own = await startTestServer({ max_waiting_requests: 1 });
    const { client: ownClient } = await connect(own.url);
    try {
      const held = call(own.url, 'POST', '/reviews', { task_type: 'deploy', proposed_action: 'Deploy build 79', blocking: true });
      await eventually(() => own.services.waiters.count === 1, 5_000, 'the blocking create to wait');
      const text = textOf(await callTool(ownClient, 'request_review', { task_type: 'email', proposed_action: 'Send the newsletter' }));
      const id = Number(/review (\d+)/.exec(text)?.[1]);
      expect(text).toMatch(/^pending\nStopped waiting for review \d+ because Greenlight already holds max_waiting_requests waiting requests/);
      expect((await call(own.url, 'GET', `/reviews/${id}`)).body).toMatchObject({ status: 'pending', proposed_action: 'Send the newsletter' });
      expect(own.services.waiters.count).toBe(1);
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
    expect(server.mcpSessions.size).toBe(0);

    const { client } = await connect(server.url, { authorization: `Bearer ${KEY}` });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(5);
    await client.close();
  });
});
