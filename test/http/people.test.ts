import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-people-tests-0123456789';
const bearer = (key: string): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${key}` } });

let server: TestServer;
let admin: string;
let otherAdmin: string;

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
  admin = (await call(server.url, 'POST', '/organizations', { name: 'Acme' }, bearer(OPERATOR_KEY))).body.api_key.key;
  otherAdmin = (await call(server.url, 'POST', '/organizations', { name: 'Globex' }, bearer(OPERATOR_KEY))).body.api_key.key;
});
afterAll(() => server?.dispose());

describe('users of an organization', () => {
  it('adds a person once per e-mail address, however it is typed', async () => {
    const dana = await call(server.url, 'POST', '/users', { email: ' Dana@Example.com ', name: 'Dana', role: 'reviewer' }, bearer(admin));
    expect(dana.status).toBe(201);
    expect(dana.body).toMatchObject({ email: 'dana@example.com', name: 'Dana', role: 'reviewer', is_active: true });
    expectProblem(await call(server.url, 'POST', '/users', { email: 'DANA@example.com', name: 'Dana again', role: 'viewer' }, bearer(admin)), 409, /dana@example\.com/);
    expectProblem(await call(server.url, 'POST', '/users', { email: 'not an address', name: 'X', role: 'viewer' }, bearer(admin)), 400, /email/);
    // Another organization may have its own Dana.
    expect((await call(server.url, 'POST', '/users', { email: 'dana@example.com', name: 'Dana', role: 'admin' }, bearer(otherAdmin))).status).toBe(201);
  });

  it('changes a role, deactivates rather than deletes, and brings a person back', async () => {
    const sam = (await call(server.url, 'POST', '/users', { email: 'sam@example.com', name: 'Sam', role: 'viewer' }, bearer(admin))).body;
    expect((await call(server.url, 'PATCH', `/users/${sam.id}`, { role: 'reviewer' }, bearer(admin))).body.role).toBe('reviewer');
    expect((await call(server.url, 'DELETE', `/users/${sam.id}`, undefined, bearer(admin))).status).toBe(204);
    expect((await call(server.url, 'GET', `/users/${sam.id}`, undefined, bearer(admin))).body).toMatchObject({ is_active: false, role: 'reviewer' });
    expect((await call(server.url, 'PATCH', `/users/${sam.id}`, { is_active: true }, bearer(admin))).body.is_active).toBe(true);
    expectProblem(await call(server.url, 'GET', `/users/${sam.id}`, undefined, bearer(otherAdmin)), 404);
    const listed = (await call(server.url, 'GET', '/users', undefined, bearer(admin))).body;
    expect(listed.users.map((user: { email: string }) => user.email)).toEqual(['dana@example.com', 'sam@example.com']);
  });
});

describe('teams', () => {
  it('forms a team of the organization’s people, adding and removing members once', async () => {
    const users = (await call(server.url, 'GET', '/users', undefined, bearer(admin))).body.users as Array<{ id: number }>;
    const [dana, sam] = users.map((user) => user.id);
    const team = await call(server.url, 'POST', '/teams', { name: 'finance', member_ids: [dana, dana] }, bearer(admin));
    expect(team.status).toBe(201);
    expect(team.body.members.map((member: { id: number }) => member.id)).toEqual([dana]);

    const added = await call(server.url, 'PUT', `/teams/${team.body.id}/members/${sam}`, undefined, bearer(admin));
    expect(added.body.members.map((member: { id: number }) => member.id)).toEqual([dana, sam]);
    const again = await call(server.url, 'PUT', `/teams/${team.body.id}/members/${sam}`, undefined, bearer(admin));
    expect(again.body.members).toHaveLength(2);
    const removed = await call(server.url, 'DELETE', `/teams/${team.body.id}/members/${dana}`, undefined, bearer(admin));
    expect(removed.body.members.map((member: { id: number }) => member.id)).toEqual([sam]);

    const theirs = (await call(server.url, 'GET', '/users', undefined, bearer(otherAdmin))).body.users[0].id;
    expectProblem(await call(server.url, 'PUT', `/teams/${team.body.id}/members/${theirs}`, undefined, bearer(admin)), 404, /user/);
    expectProblem(await call(server.url, 'POST', '/teams', { name: 'mixed', member_ids: [theirs] }, bearer(admin)), 404, /user/);
    expect((await call(server.url, 'GET', '/teams', undefined, bearer(admin))).body.count).toBe(1);
    expectProblem(await call(server.url, 'GET', `/teams/${team.body.id}`, undefined, bearer(otherAdmin)), 404);
  });

  it('writes each change to the audit log', async () => {
    const actions = (await call(server.url, 'GET', '/audit-logs?target_type=team', undefined, bearer(admin))).body.entries.map((entry: { action: string }) => entry.action);
    // The second, idempotent PUT changed nothing, and is not recorded.
    expect(actions).toEqual(['team.member_removed', 'team.member_added', 'team.created']);
    expect((await call(server.url, 'GET', '/audit-logs/verify', undefined, bearer(admin))).body.valid).toBe(true);
  });
});
