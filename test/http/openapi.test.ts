import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
let document: any;

beforeAll(async () => {
  server = await startTestServer();
  document = await (await fetch(`${server.url}/openapi.json`)).json();
});
afterAll(() => server.dispose());

const CORE_OPERATIONS = [
  'post /reviews',
  'get /reviews',
  'get /reviews/{review_id}',
  'post /reviews/{review_id}/decide',
  'get /reviews/{review_id}/decision',
  'post /reviews/{review_id}/feedback',
  'get /reviews/{review_id}/feedback',
  'post /reviews/{review_id}/attachments',
  'get /reviews/{review_id}/attachments',
  'get /attachments/{attachment_id}',
  'get /attachments/{attachment_id}/download',
  'delete /attachments/{attachment_id}',
  'get /stats',
  'get /health',
  'get /events',
];
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

  it('lists every core operation', () => {
    const listed = operations(document).map(([name]) => name);
    for (const operation of CORE_OPERATIONS) expect(listed).toContain(operation);
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
});
