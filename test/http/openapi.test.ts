import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard } from '../support/dashboard';
import { multipart, type RawRequest, type RawResponse, send } from '../support/raw-http';
import { startTestServer, type TestServer } from '../support/server';

/** Small enough that the oversized-body probe is oversized for an upload as well as for JSON. */
const MAX_ATTACHMENT_BYTES = 1024;

let server: TestServer;
let document: any;

beforeAll(async () => {
  server = await startTestServer({ max_attachment_bytes: MAX_ATTACHMENT_BYTES });
  document = await (await fetch(`${server.url}/openapi.json`)).json();
});
afterAll(() => server.dispose());

/** Each core operation, with the name a generated client gives its method. */
const CORE_OPERATIONS: Record<string, string> = {
  'post /reviews': 'createReview',
  'get /reviews': 'listReviews',
  'get /reviews/{review_id}': 'getReview',
  'post /reviews/{review_id}/decide': 'decideReview',
  'get /reviews/{review_id}/decision': 'getDecision',
  'post /reviews/{review_id}/feedback': 'addFeedback',
  'get /reviews/{review_id}/feedback': 'listFeedback',
  'post /reviews/{review_id}/attachments': 'uploadAttachment',
  'get /reviews/{review_id}/attachments': 'listAttachments',
  'get /attachments/{attachment_id}': 'getAttachment',
  'get /attachments/{attachment_id}/download': 'downloadAttachment',
  'delete /attachments/{attachment_id}': 'deleteAttachment',
  'get /stats': 'getStatistics',
  'get /health': 'getHealth',
  'get /events': 'streamEvents',
  'get /openapi.json': 'getOpenApiDocument',
};
const PUBLIC = new Set(['get /health', 'get /openapi.json']);

function operations(doc: any): Array<[string, any]> {
  return Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, operation]) => [`${method} ${path}`, operation] as [string, any]),
  );
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', async () => {
    expect(document.openapi).toMatch(/^3\.0\./);
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
  });

  it('lists every core operation under the name a generated client gives its method', () => {
    const names = Object.fromEntries(operations(document).map(([name, operation]) => [name, operation.operationId]));
    expect(names).toMatchObject(CORE_OPERATIONS);
  });

  it('names every operation, each with an operationId of its own', () => {
    const ids = operations(document).map(([, operation]) => operation.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names a server relative to itself, which reaches the API wherever the document was fetched: directly or through the dashboard's /api", async () => {
    const dashboard = await startTestDashboard(server);
    try {
      for (const documentUrl of [`${server.url}/openapi.json`, `${dashboard.url}/api/openapi.json`]) {
        const served: any = await (await fetch(documentUrl)).json();
        // As Swagger UI and generated clients do: the server URL resolved against the document's, then the path.
        const base = new URL(served.servers[0].url, documentUrl).href.replace(/\/$/, '');
        const health = await fetch(`${base}/health`);
        expect(health.headers.get('content-type'), documentUrl).toMatch(/^application\/json/);
        expect(await health.json()).toMatchObject({ service: 'greenlight', status: 'healthy' });
      }
    } finally {
      await dashboard.dispose();
    }
  });

  it('documents a success, 401 where a key is needed, 400 for inputs and 404 for ids', async () => {
    const dereferenced: any = await SwaggerParser.dereference(structuredClone(document));
    for (const [name, operation] of operations(dereferenced)) {
      const codes = Object.keys(operation.responses);
      expect(codes.some((c) => c.startsWith('2')), `${name} success`).toBe(true);
      const isPublic = PUBLIC.has(name) || (operation.security && operation.security.length === 0);
      if (!isPublic) expect(codes, `${name} 401`).toContain('401');
      const hasInput = operation.requestBody || (operation.parameters ?? []).some((p: any) => p.in !== 'header');
      if (hasInput) expect(codes, `${name} 400`).toContain('400');
      if (name.includes('_id}')) expect(codes, `${name} 404`).toContain('404');
      for (const [code, response] of Object.entries<any>(operation.responses)) {
        expect(response.description, `${name} ${code} description`).toBeTruthy();
      }
    }
  });

  it('gives an example for every JSON request body and JSON success response', async () => {
    const dereferenced: any = await SwaggerParser.dereference(structuredClone(document));
    const hasExample = (media: any): boolean =>
      Boolean(media?.example ?? media?.examples ?? media?.schema?.example ?? media?.schema?.allOf?.some((s: any) => s.example));
    for (const [name, operation] of operations(dereferenced)) {
      const body = operation.requestBody?.content?.['application/json'];
      if (body) expect(hasExample(body), `${name} request example`).toBe(true);
      for (const [code, response] of Object.entries<any>(operation.responses)) {
        const json = response.content?.['application/json'];
        if (!json || !code.startsWith('2') || name === 'get /openapi.json') continue;
        const listExample = json.schema?.properties && Object.values<any>(json.schema.properties).some((p) => p.items?.example);
        expect(hasExample(json) || listExample, `${name} ${code} example`).toBe(true);
      }
    }
  });

  it('serves the same document the requests are validated against', async () => {
    const bad = await fetch(`${server.url}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'x', proposed_action: 'y', urgency: 'whenever' }),
    });
    const problem = (await bad.json()) as { detail: string };
    const allowed = document.components.schemas.Urgency.enum.join(', ');
    expect(problem.detail).toBe(`urgency must be one of: ${allowed}`);
  });

  it('finds a request\'s operation however its path is written, and knows a path it serves by another method', async () => {
    // Paths are matched case-insensitively, with or without a trailing slash, as Express routes them.
    for (const path of ['/REVIEWS', '/Reviews/', '/reviews']) {
      const created = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_type: 'x', proposed_action: 'y', urgency: 'whenever' }),
      });
      expect(created.status).toBe(400);
      expect(((await created.json()) as { detail: string }).detail).toMatch(/^urgency must be one of/);
    }
    const wrongMethod = await fetch(`${server.url}/stats`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect((await fetch(`${server.url}/statistics`)).status).toBe(404);
  });
});

interface ProbedOperation {
  /** `get /reviews/{review_id}`, as `operations` names it. */
  name: string;
  method: string;
  /** The path with every id filled in: the middleware answers before any id is looked up. */
  path: string;
  /** The media type of its request body, if it takes one. */
  bodyType?: string;
  /** Served by the hosted edition only (`x-edition: hosted`). */
  hosted: boolean;
}

function probedOperations(): ProbedOperation[] {
  return operations(document).map(([name, operation]) => {
    const [method, template] = name.split(' ');
    const bodyType = operation.requestBody ? Object.keys(operation.requestBody.content)[0] : undefined;
    return { name, method: method.toUpperCase(), path: template.replace(/\{[^}]+\}/g, '1'), bodyType, hosted: operation['x-edition'] === 'hosted' };
  });
}

/** A body of the operation's own media type, `bytes` long give or take its framing. */
async function bodyOf(operation: ProbedOperation, bytes: number): Promise<Pick<RawRequest, 'headers' | 'body'>> {
  if (operation.bodyType === 'multipart/form-data') return multipart({ file: new Blob([Buffer.alloc(bytes, 'x')]) });
  return { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ padding: 'x'.repeat(bytes) })) };
}

/** The example of the operation's JSON request body, if it has one. */
function exampleBodyOf(operation: ProbedOperation): Pick<RawRequest, 'headers' | 'body'> {
  const [method, template] = operation.name.split(' ');
  const schema = document.paths[template][method].requestBody?.content?.['application/json']?.schema;
  const example = schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()].example : schema?.example;
  return example === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(example)) };
}

/**
 * Sends each operation the request `ask` makes of it (none where it returns undefined) and
 * keeps the answers whose status is `status`, by operation name.
 */
async function answersWith(
  baseUrl: string,
  status: number,
  ask: (operation: ProbedOperation) => Promise<RawRequest | undefined>,
): Promise<Map<string, RawResponse>> {
  const answers = new Map<string, RawResponse>();
  for (const operation of probedOperations()) {
    const request = await ask(operation);
    if (!request) continue;
    const answer = await send(baseUrl, request);
    if (answer.status === status) answers.set(operation.name, answer);
  }
  return answers;
}

/**
 * The operations that document `status` must be exactly those that answered it, and each
 * answer must carry the media type and headers its documented response promises.
 */
async function expectDocumentedExactly(status: number, answers: Map<string, RawResponse>): Promise<void> {
  const dereferenced: any = await SwaggerParser.dereference(structuredClone(document));
  const documenting = operations(dereferenced).filter(([, operation]) => operation.responses[String(status)]);
  expect(documenting.map(([name]) => name).sort()).toEqual([...answers.keys()].sort());
  for (const [name, operation] of documenting) {
    const response = operation.responses[String(status)];
    const answer = answers.get(name)!;
    const mediaType = String(answer.headers['content-type']).split(';')[0];
    expect(Object.keys(response.content ?? {}), `${name} ${status} content`).toContain(mediaType);
    for (const header of Object.keys(response.headers ?? {})) {
      expect(answer.headers[header.toLowerCase()], `${name} ${status} ${header}`).toBeDefined();
    }
  }
}

describe('the answers given in front of the routes, by every operation that gives them', () => {
  const KEY = 'openapi-test-key-0123456789';
  let guarded: TestServer;
  let hosted: TestServer;

  beforeAll(async () => {
    guarded = await startTestServer({ enable_auth: true, api_key: KEY, rate_limit_per_minute: 1 });
    hosted = await startTestServer({ edition: 'hosted' });
  });
  afterAll(async () => {
    await guarded.dispose();
    await hosted.dispose();
  });

  it('documents 400 where an unknown query parameter is refused', async () => {
    const answers = await answersWith(server.url, 400, async (operation) => ({
      method: operation.method,
      path: `${operation.path}?unknown_parameter=1`,
      ...(operation.bodyType ? await bodyOf(operation, 1) : {}),
    }));
    await expectDocumentedExactly(400, answers);
  });

  it('documents 401 where a request without a credential is refused, each operation asked in its own edition', async () => {
    // With its example body: signing in with an example's e-mail and password is a 401 of its own.
    const inEdition = (hostedOnly: boolean) => async (operation: ProbedOperation) =>
      operation.hosted === hostedOnly ? { method: operation.method, path: operation.path, ...exampleBodyOf(operation) } : undefined;
    const answers = new Map([...(await answersWith(guarded.url, 401, inEdition(false))), ...(await answersWith(hosted.url, 401, inEdition(true)))]);
    await expectDocumentedExactly(401, answers);
  });

  it('documents 403 on every operation: a server on loopback refuses requests addressed to another Host', async () => {
    const answers = await answersWith(server.url, 403, async ({ method, path }) => ({ method, path, headers: { host: 'evil.example' } }));
    expect(answers.size).toBe(probedOperations().length);
    await expectDocumentedExactly(403, answers);
  });

  it('documents 413 where a request body can be too large: JSON past 1 MiB, uploads past max_attachment_bytes', async () => {
    const answers = await answersWith(server.url, 413, async (operation) =>
      operation.bodyType ? { method: operation.method, path: operation.path, ...(await bodyOf(operation, 1024 * 1024 + 1)) } : undefined,
    );
    await expectDocumentedExactly(413, answers);
  });

  it('documents 415 where a body that is neither JSON nor an upload is refused', async () => {
    const answers = await answersWith(server.url, 415, async ({ method, path }) => ({
      method,
      path,
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('approve'),
    }));
    await expectDocumentedExactly(415, answers);
  });

  it('documents 429 where the rate limit applies', async () => {
    const authorization = { authorization: `Bearer ${KEY}` };
    // The minute's one request; every limited request after it is refused.
    await send(guarded.url, { method: 'GET', path: '/reviews', headers: authorization });
    const answers = await answersWith(guarded.url, 429, async ({ method, path }) => ({ method, path, headers: authorization }));
    await expectDocumentedExactly(429, answers);
  });
});
