import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInPerson } from '../support/seed';
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

describe("the organization's last active admin", () => {
  /** A new organization, its admin key, and an admin person signed in to the console. */
  async function organizationWithAdmin(name: string): Promise<{ key: string; admin: { id: number; headers: Record<string, string> } }> {
    const key = (await call(server.url, 'POST', '/organizations', { name }, bearer(OPERATOR_KEY))).body.api_key.key as string;
    const admin = await signedInPerson(server.url, key, { email: `admin@${name.toLowerCase()}.example`, name: `${name} Admin`, role: 'admin' });
    return { key, admin };
  }

  it('is neither demoted nor deactivated (409, with why), not even by themselves, until another person is an admin', async () => {
    const { key, admin } = await organizationWithAdmin('Initech');
    expectProblem(await call(server.url, 'PATCH', `/users/${admin.id}`, { role: 'viewer' }, { headers: admin.headers }), 409, /last active admin, so they cannot be made a viewer: make another person an admin first/);
    expectProblem(await call(server.url, 'PATCH', `/users/${admin.id}`, { role: 'reviewer' }, bearer(key)), 409, /last active admin/);
    expectProblem(await call(server.url, 'PATCH', `/users/${admin.id}`, { is_active: false }, bearer(key)), 409, /cannot be deactivated/);
    expectProblem(await call(server.url, 'DELETE', `/users/${admin.id}`, undefined, bearer(key)), 409, /cannot be deactivated/);
    expect((await call(server.url, 'GET', `/users/${admin.id}`, undefined, bearer(key))).body).toMatchObject({ role: 'admin', is_active: true });
    // A rename is no demotion.
    expect((await call(server.url, 'PATCH', `/users/${admin.id}`, { name: 'Bill', role: 'admin' }, { headers: admin.headers })).status).toBe(200);

    const second = (await call(server.url, 'POST', '/users', { email: 'peter@initech.example', name: 'Peter', role: 'admin' }, bearer(key))).body;
    expect((await call(server.url, 'PATCH', `/users/${admin.id}`, { role: 'viewer' }, { headers: admin.headers })).body.role).toBe('viewer');
    expectProblem(await call(server.url, 'DELETE', `/users/${second.id}`, undefined, bearer(key)), 409, new RegExp(`user ${second.id} is the organization's last active admin`));
    // A deactivated admin is no admin to keep.
    expect((await call(server.url, 'PATCH', `/users/${admin.id}`, { role: 'admin', is_active: false }, bearer(key))).status).toBe(200);
    expectProblem(await call(server.url, 'PATCH', `/users/${second.id}`, { role: 'reviewer' }, bearer(key)), 409, /last active admin/);
  });

  it('stays when two admins demote each other at once: one change is made, the other refused', async () => {
    const organizations = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const { key, admin } = await organizationWithAdmin(`Pair${i}`);
        const other = await signedInPerson(server.url, key, { email: `other@pair${i}.example`, name: 'Other Admin', role: 'admin' });
        return { key, admins: [admin, other] };
      }),
    );
    // Each admin demotes the other, every organization at the same moment.
    const answers = await Promise.all(
      organizations.flatMap(({ admins: [first, second] }) => [
        call(server.url, 'PATCH', `/users/${second.id}`, { role: 'viewer' }, { headers: first.headers }),
        call(server.url, 'PATCH', `/users/${first.id}`, { role: 'viewer' }, { headers: second.headers }),
      ]),
    );
    for (const [i, { key }] of organizations.entries()) {
      const pair = answers.slice(2 * i, 2 * i + 2);
      // The refused one is refused as the last admin's demotion (409) when both ran at once, or,
      // when the other had committed before it was let in, because its caller is no admin any more (403).
      const [made, refused] = [...pair].sort((a, b) => a.status - b.status);
      expect(made.status).toBe(200);
      if (refused.status === 409) expectProblem(refused, 409, /last active admin/);
      else expectProblem(refused, 403, /admin/);
      const users = (await call(server.url, 'GET', '/users', undefined, bearer(key))).body.users as Array<{ role: string; is_active: boolean }>;
      expect(users.filter((user) => user.role === 'admin' && user.is_active)).toHaveLength(1);
    }
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
