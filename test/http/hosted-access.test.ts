import { randomUUID } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attach } from '../support/seed';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';

/**
 * Every operation of the OpenAPI document, called by every kind of credential of the hosted
 * edition, generated from the document itself: an endpoint added later is covered without a
 * test written for it. Who may call what is the document's `x-callers`; each call gets fresh
 * records of its own (a deleted attachment or a decided review cannot spoil the next call).
 */

const OPERATOR_KEY = 'operator-key-for-access-tests-0123456789';
const CREDENTIALS = ['none', 'operator', 'admin', 'agent'] as const;
type Credential = (typeof CREDENTIALS)[number];

interface Operation {
  method: string;
  path: string;
  operationId: string;
  callers: string[];
  jsonExample?: unknown;
  multipart: boolean;
}

interface Organization {
  id: number;
  keys: Record<'admin' | 'agent', string>;
}

let server: TestServer;
let operations: Operation[];
let acme: Organization;
let globex: Organization;

function headersFor(credential: Credential, organization: Organization): Record<string, string> {
  if (credential === 'none') return {};
  return { authorization: `Bearer ${credential === 'operator' ? OPERATOR_KEY : organization.keys[credential]}` };
}

async function organization(name: string): Promise<Organization> {
  const created = await call(server.url, 'POST', '/organizations', { name }, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
  const admin = created.body.api_key.key as string;
  const agent = await call(server.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: { authorization: `Bearer ${admin}` } });
  return { id: created.body.organization.id, keys: { admin, agent: agent.body.key } };
}

/** A new record of `owner` for each path parameter the operation names. */
async function pathFor(operation: Operation, owner: Organization): Promise<string> {
  const admin = { authorization: `Bearer ${owner.keys.admin}` };
  const newReview = async (): Promise<number> => (await call(server.url, 'POST', '/reviews', sampleReview, { headers: admin })).body.id;
  const values: Record<string, () => Promise<number>> = {
    review_id: newReview,
    attachment_id: async () => (await attach(server.url, await newReview(), 'evidence', 'evidence.txt', 'text/plain', undefined, admin)).id,
    org_id: async () => owner.id,
    user_id: async () => (await call(server.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name: 'Someone', role: 'reviewer' }, { headers: admin })).body.id,
    team_id: async () => (await call(server.url, 'POST', '/teams', { name: 'spare team' }, { headers: admin })).body.id,
    agent_id: async () => (await call(server.url, 'POST', '/agents', { name: 'spare agent' }, { headers: admin })).body.id,
    api_key_id: async () => (await call(server.url, 'POST', `/organizations/${owner.id}/api-keys`, { name: 'spare', scope: 'agent' }, { headers: admin })).body.id,
  };
  let path = operation.path;
  for (const [, name] of operation.path.matchAll(/\{(\w+)\}/g)) {
    const make = values[name];
    if (!make) throw new Error(`no fixture for the path parameter ${name} of ${operation.operationId}: add one here`);
    path = path.replace(`{${name}}`, String(await make()));
  }
  return path;
}

/** The status of one call; an event stream is read only up to its headers. */
async function statusOf(operation: Operation, path: string, headers: Record<string, string>): Promise<number> {
  const abort = new AbortController();
  let body: BodyInit | undefined;
  if (operation.multipart) {
    const form = new FormData();
    form.append('file', new Blob(['evidence']), 'evidence.txt');
    body = form;
  } else if (operation.jsonExample !== undefined) {
    body = JSON.stringify(operation.jsonExample);
    headers = { ...headers, 'content-type': 'application/json' };
  }
  const response = await fetch(`${server.url}${path}`, { method: operation.method.toUpperCase(), headers, body, signal: abort.signal });
  abort.abort();
  return response.status;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  const document: any = await SwaggerParser.dereference((await call(server.url, 'GET', '/openapi.json')).body);
  operations = [];
  for (const [path, methods] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      if (Array.isArray(operation.security) && operation.security.length === 0) continue;
      const content = operation.requestBody?.content ?? {};
      const json = content['application/json'];
      operations.push({
        method,
        path,
        operationId: operation.operationId,
        callers: operation['x-callers'],
        jsonExample: json ? (json.example ?? json.schema?.example) : undefined,
        multipart: 'multipart/form-data' in content,
      });
    }
  }
  acme = await organization('Acme');
  globex = await organization('Globex');
});
afterAll(() => server?.dispose());

describe('who may call each operation of the hosted edition, from the OpenAPI document', () => {
  it('covers every operation that needs a key, each with its callers', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const operation of operations) expect(operation.callers, operation.operationId).toEqual(expect.any(Array));
  });

  it('answers every allowed caller with success, every other key with 403 and no key with 401', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const operation of operations) {
      for (const credential of CREDENTIALS) {
        const allowed = credential !== 'none' && operation.callers.includes(credential);
        const status = await statusOf(operation, await pathFor(operation, acme), headersFor(credential, acme));
        outcomes.push(`${operation.operationId} as ${credential}: ${allowed ? (status < 300 ? 'success' : status) : status}`);
        expected.push(`${operation.operationId} as ${credential}: ${allowed ? 'success' : credential === 'none' ? 401 : 403}`);
      }
    }
    expect(outcomes).toEqual(expected);
  });

  it("answers 404 for every record of another organization, to each key that may call the operation", async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.path.includes('{'))) {
      for (const credential of ['admin', 'agent'] as const) {
        const status = await statusOf(operation, await pathFor(operation, globex), headersFor(credential, acme));
        outcomes.push(`${operation.operationId} as acme's ${credential}: ${status}`);
        expected.push(`${operation.operationId} as acme's ${credential}: ${operation.callers.includes(credential) ? 404 : 403}`);
      }
    }
    expect(outcomes).toEqual(expected);
  });
});
