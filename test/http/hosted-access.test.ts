import { randomUUID } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attach } from '../support/seed';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';
import { FakeSlack, hostedSlackSettings } from '../support/slack';

/**
 * Every operation of the OpenAPI document, called by every kind of credential of the hosted
 * edition, generated from the document itself: an endpoint added later is covered without a
 * test written for it. Who may call what is the document's `x-callers`; each call gets fresh
 * records of its own (a deleted attachment or a decided review cannot spoil the next call).
 */

const OPERATOR_KEY = 'operator-key-for-access-tests-0123456789';
/** Every kind of caller: no credential, the operator key, an organization's two kinds of key, and its people signed in. */
const CREDENTIALS = ['none', 'operator', 'admin', 'agent', 'signed-in admin', 'reviewer', 'viewer'] as const;
type Credential = (typeof CREDENTIALS)[number];
type PersonRole = 'admin' | 'reviewer' | 'viewer';
const ORGANIZATION_CREDENTIALS = CREDENTIALS.filter((credential) => credential !== 'none' && credential !== 'operator');

/** The caller a credential is, in the document's `x-callers`: a signed-in admin may do what an admin key may. */
const callerOf = (credential: Credential): string => (credential === 'signed-in admin' ? 'admin' : credential);

interface Operation {
  method: string;
  path: string;
  operationId: string;
  callers: string[];
  jsonExample?: unknown;
  multipart: boolean;
}

interface Session {
  cookie: string;
  csrfToken: string;
}

interface Organization {
  id: number;
  keys: Record<'admin' | 'agent', string>;
  people: Record<PersonRole, Session>;
  /** A reviewer an admin key decides for. */
  reviewerId: number;
}

let server: TestServer;
let slack: FakeSlack;
let operations: Operation[];
let acme: Organization;
let globex: Organization;

function headersFor(credential: Credential, organization: Organization): Record<string, string> {
  switch (credential) {
    case 'none':
      return {};
    case 'operator':
      return { authorization: `Bearer ${OPERATOR_KEY}` };
    case 'admin':
    case 'agent':
      return { authorization: `Bearer ${organization.keys[credential]}` };
    default: {
      const session = organization.people[credential === 'signed-in admin' ? 'admin' : credential];
      return { cookie: session.cookie, 'x-csrf-token': session.csrfToken };
    }
  }
}

/** A person of the organization, invited by its admin key, who sets a password from the link and is signed in. */
async function signedInPerson(admin: string, role: PersonRole): Promise<{ id: number; session: Session }> {
  const invited = await call(server.url, 'POST', '/users', { email: `${role}-${randomUUID()}@example.com`, name: `A ${role}`, role }, { headers: { authorization: `Bearer ${admin}` } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
  const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: 'a long enough passphrase' });
  expect(accepted.status).toBe(201);
  const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0];
  return { id: invited.body.id, session: { cookie, csrfToken: accepted.body.csrf_token } };
}

async function organization(name: string): Promise<Organization> {
  const created = await call(server.url, 'POST', '/organizations', { name }, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
  const admin = created.body.api_key.key as string;
  const agent = await call(server.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: { authorization: `Bearer ${admin}` } });
  const [signedInAdmin, reviewer, viewer] = await Promise.all((['admin', 'reviewer', 'viewer'] as const).map((role) => signedInPerson(admin, role)));
  return {
    id: created.body.organization.id,
    keys: { admin, agent: agent.body.key },
    people: { admin: signedInAdmin.session, reviewer: reviewer.session, viewer: viewer.session },
    reviewerId: reviewer.id,
  };
}

/**
 * The body an operation is called with: its example, made the caller's own where the example
 * names records (a person, a team's members), and where a decision in an organization is a
 * person's, never a typed name: an admin key names the reviewer it decides for.
 */
function bodyFor(operation: Operation, credential: Credential, organization: Organization): unknown {
  const example = operation.jsonExample as Record<string, unknown>;
  switch (operation.operationId) {
    case 'createUser':
      return { ...example, email: `${randomUUID()}@example.com` };
    case 'createTeam':
      return { ...example, member_ids: [organization.reviewerId] };
    case 'createWorkflow':
      return { ...example, conditions: { task_type: 'never-filed' }, stages: [{ name: 'finance', approvers: { user_ids: [organization.reviewerId] }, required_approvals: 1 }] };
    case 'createRoutingRule':
      return { name: `rule ${randomUUID()}`, priority: 1, assign_to_user_id: organization.reviewerId };
    case 'decideReview': {
      const { reviewer_name: _typedName, ...decision } = example;
      return credential === 'admin' ? { ...decision, reviewer_id: organization.reviewerId } : decision;
    }
    default:
      return example;
  }
}

/** A new record of `owner` for each path parameter the operation names. */
async function pathFor(operation: Operation, owner: Organization): Promise<string> {
  const admin = { authorization: `Bearer ${owner.keys.admin}` };
  let webhookId = 0;
  let evalId = 0;
  const newReview = async (): Promise<number> => (await call(server.url, 'POST', '/reviews', sampleReview, { headers: admin })).body.id;
  const values: Record<string, () => Promise<number>> = {
    review_id: newReview,
    attachment_id: async () => (await attach(server.url, await newReview(), 'evidence', 'evidence.txt', 'text/plain', undefined, admin)).id,
    org_id: async () => owner.id,
    user_id: async () => (await call(server.url, 'POST', '/users', { email: `${randomUUID()}@example.com`, name: 'Someone', role: 'reviewer' }, { headers: admin })).body.id,
    team_id: async () => (await call(server.url, 'POST', '/teams', { name: 'spare team' }, { headers: admin })).body.id,
    agent_id: async () => (await call(server.url, 'POST', '/agents', { name: 'spare agent' }, { headers: admin })).body.id,
    rule_id: async () =>
      (await call(server.url, 'POST', '/routing-rules', { name: `rule ${randomUUID()}`, priority: 1, assign_to_team_id: (await call(server.url, 'POST', '/teams', { name: 'routed' }, { headers: admin })).body.id }, { headers: admin })).body.id,
    workflow_id: async () =>
      (await call(server.url, 'POST', '/workflows', { name: 'spare workflow', conditions: { task_type: 'never-filed' }, stages: [{ name: 'admins', approvers: { roles: ['admin'] }, required_approvals: 1 }] }, { headers: admin })).body.id,
    // An endpoint no event of these calls is for; its deliveries fail to resolve and wait for a retry.
    webhook_id: async () => (webhookId = (await call(server.url, 'POST', '/webhooks', { url: 'https://hooks.example.com/greenlight', events: ['review.expired'] }, { headers: admin })).body.id),
    // A delivery of the endpoint the path names before it.
    delivery_id: async () => {
      await call(server.url, 'POST', `/webhooks/${webhookId}/test`, undefined, { headers: admin });
      return (await call(server.url, 'GET', `/webhooks/${webhookId}/deliveries`, undefined, { headers: admin })).body.deliveries[0].id;
    },
    eval_id: async () => (evalId = (await call(server.url, 'POST', '/evals', { name: 'spare suite' }, { headers: admin })).body.id),
    // A run of the suite the path names before it.
    run_id: async () => (await call(server.url, 'POST', `/evals/${evalId}/runs`, undefined, { headers: admin })).body.id,
    api_key_id: async () => (await call(server.url, 'POST', `/organizations/${owner.id}/api-keys`, { name: 'spare', scope: 'agent' }, { headers: admin })).body.id,
  };
  // The organization's Slack install is a singleton: each call finds one (a DELETE removed the last).
  if (operation.path === '/integrations/slack') await installSlack(owner);
  let path = operation.path;
  for (const [, name] of operation.path.matchAll(/\{(\w+)\}/g)) {
    const make = values[name];
    if (!make) throw new Error(`no fixture for the path parameter ${name} of ${operation.operationId}: add one here`);
    path = path.replace(`{${name}}`, String(await make()));
  }
  return path;
}

/** Installs Slack for `owner` through the OAuth flow, against the fake Slack. */
async function installSlack(owner: Organization): Promise<void> {
  const code = `code-${randomUUID()}`;
  slack.oauthCodes.add(code);
  const started = await call(server.url, 'POST', '/integrations/slack/oauth', undefined, { headers: { authorization: `Bearer ${owner.keys.admin}` } });
  const state = new URL(started.body.authorize_url).searchParams.get('state')!;
  const completed = await fetch(`${server.url}/integrations/slack/oauth/callback?${new URLSearchParams({ code, state })}`);
  expect(completed.status).toBe(200);
}

/** The status of one call; an event stream is read only up to its headers. */
async function statusOf(operation: Operation, path: string, credential: Credential, caller: Organization): Promise<number> {
  let headers = headersFor(credential, caller);
  const abort = new AbortController();
  let body: BodyInit | undefined;
  // JSON where the operation takes it (POST /reviews takes either), else a file.
  if (operation.jsonExample !== undefined) {
    body = JSON.stringify(bodyFor(operation, credential, caller));
    headers = { ...headers, 'content-type': 'application/json' };
  } else if (operation.multipart) {
    const form = new FormData();
    form.append('file', new Blob(['evidence']), 'evidence.txt');
    body = form;
  }
  const response = await fetch(`${server.url}${path}`, { method: operation.method.toUpperCase(), headers, body, signal: abort.signal });
  abort.abort();
  return response.status;
}

beforeAll(async () => {
  slack = await FakeSlack.start();
  server = await startTestServer(hostedSlackSettings(slack, OPERATOR_KEY));
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
afterAll(async () => {
  await server?.dispose();
  await slack?.stop();
});

/**
 * The two walks below make hundreds of requests one after another, each with records of its own:
 * the default time for a test of a few calls is too short for them on a loaded machine.
 */
const WALK_TIMEOUT_MS = 180_000;

describe('who may call each operation of the hosted edition, from the OpenAPI document', () => {
  it('covers every operation that needs a key, each with its callers', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const operation of operations) expect(operation.callers, operation.operationId).toEqual(expect.any(Array));
  });

  it('answers every allowed caller with success, every other credential with 403 and none with 401', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const operation of operations) {
      for (const credential of CREDENTIALS) {
        const allowed = credential !== 'none' && operation.callers.includes(callerOf(credential));
        const status = await statusOf(operation, await pathFor(operation, acme), credential, acme);
        outcomes.push(`${operation.operationId} as ${credential}: ${allowed ? (status < 300 ? 'success' : status) : status}`);
        expected.push(`${operation.operationId} as ${credential}: ${allowed ? 'success' : credential === 'none' ? 401 : 403}`);
      }
    }
    expect(outcomes).toEqual(expected);
  }, WALK_TIMEOUT_MS);

  it("answers 404 for every record of another organization, to each credential that may call the operation", async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.path.includes('{'))) {
      for (const credential of ORGANIZATION_CREDENTIALS) {
        const status = await statusOf(operation, await pathFor(operation, globex), credential, acme);
        outcomes.push(`${operation.operationId} as acme's ${credential}: ${status}`);
        expected.push(`${operation.operationId} as acme's ${credential}: ${operation.callers.includes(callerOf(credential)) ? 404 : 403}`);
      }
    }
    expect(outcomes).toEqual(expected);
  }, WALK_TIMEOUT_MS);
});
