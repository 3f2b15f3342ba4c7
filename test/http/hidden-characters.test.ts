import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, textOf } from '../support/mcp';
import { attach } from '../support/seed';
import { call, expectProblem, startTestServer, type TestServer } from '../support/server';

const REORDERED = 'echo "cleaning build cache" \u202E; rm -rf ~; #\u202C';

describe('refuse_hidden_characters: true', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ refuse_hidden_characters: true });
  });
  afterAll(() => server.dispose());

  it('answers 400 naming the field and the code point, and stores nothing', async () => {
    const response = await call(server.url, 'POST', '/reviews', { task_type: 'cleanup', proposed_action: REORDERED });
    expectProblem(response, 400, /^proposed_action contains U\+202E, a bidirectional control, which reorders the text shown around it, at character 29; /);
    expect(response.body.errors).toEqual([{ field: 'proposed_action', message: expect.stringMatching(/^contains U\+202E/) }]);
    expect((await call(server.url, 'GET', '/reviews')).body.total).toBe(0);
  });

  it.each([
    ['task_type', { task_type: 'clean\u200Bup' }, 'task_type', /U\+200B, an invisible character/],
    ['agent_reasoning', { agent_reasoning: 'fine\u001B[2K' }, 'agent_reasoning', /U\+001B, a control character/],
    ['framework', { framework: 'lang\u2066chain' }, 'framework', /U\+2066, a bidirectional control/],
    ['a metadata value', { metadata: { ticket: { labels: ['ok', 'p\u00ADay'] } } }, 'metadata.ticket.labels[1]', /U\+00AD/],
    ['a metadata key', { metadata: { 'tar\u200Fget': 'prod' } }, 'metadata', /has a key, "tar\\\\u\{200F\}get", that contains U\+200F/],
  ])('looks at %s', async (_, fields, field, message) => {
    const response = await call(server.url, 'POST', '/reviews', { task_type: 'cleanup', proposed_action: 'Clear the build cache', ...fields });
    expectProblem(response, 400);
    expect(response.body.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
  });

  it('takes ordinary text: line breaks, emoji, other scripts', async () => {
    const response = await call(server.url, 'POST', '/reviews', {
      task_type: 'cleanup',
      proposed_action: 'SELECT 1;\r\n-- ok\n\tDELETE FROM cache;',
      agent_reasoning: '⚠️ Проверено: 東京タワー 👩🏽‍💻',
      metadata: { 'ключ': 'значение' },
    });
    expect(response.status).toBe(201);
  });

  it('refuses an attachment whose file name holds a hidden character, and keeps no file', async () => {
    const review = (await call(server.url, 'POST', '/reviews', { task_type: 'cleanup', proposed_action: 'Clear the build cache' })).body;
    const refused = await attach(server.url, review.id, 'log\n', 'report\u202Etxt.exe', 'text/plain');
    expect(refused).toMatchObject({ status: 400, errors: [{ field: 'filename', message: expect.stringMatching(/^contains U\+202E/) }] });
    expect((await call(server.url, 'GET', `/reviews/${review.id}/attachments`)).body.count).toBe(0);
    const files = fs.readdirSync(path.join(server.dataDir, 'attachments'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(files).toEqual([]);
    expect((await attach(server.url, review.id, 'log\n', 'report.txt', 'text/plain')).file_name).toBe('report.txt');
  });

  it('refuses the same through the MCP tool request_review, which creates reviews the same way', async () => {
    const client = new Client({ name: 'greenlight-tests', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const result = await callTool(client, 'request_review', { task_type: 'cleanup', proposed_action: REORDERED, blocking: false });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^proposed_action contains U\+202E/);
    } finally {
      await client.close();
    }
  });
});

describe('refuse_hidden_characters: false (the default)', () => {
  it('stores the text as sent, for the dashboard to show marked', async () => {
    const server = await startTestServer();
    try {
      const response = await call(server.url, 'POST', '/reviews', { task_type: 'cleanup', proposed_action: REORDERED });
      expect(response.status).toBe(201);
      expect(response.body.proposed_action).toBe(REORDERED);
    } finally {
      await server.dispose();
    }
  });
});
