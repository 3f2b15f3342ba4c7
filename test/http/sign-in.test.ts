import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, expectProblem, type JsonResponse, sampleReview, startTestServer, type TestServer } from '../support/server';

const OPERATOR_KEY = 'operator-key-for-sign-in-tests-0123456789';
const PASSWORD = 'correct horse battery staple';
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Session {
  cookie: string;
  csrfToken: string;
  userId: number;
}

/** What a browser sends with a session: the cookie, and on a change the CSRF token. */
const withSession = (session: Session): Record<string, string> => ({ cookie: session.cookie, 'x-csrf-token': session.csrfToken });

let server: TestServer;
let organizationId: number;
let admin: Record<string, string>;
let agent: Record<string, string>;

function tokenOf(invitationUrl: string): string {
  return new URL(invitationUrl).hash.replace('#/invitation/', '');
}

function cookieOf(answer: JsonResponse): string {
  return (answer.headers.get('set-cookie') ?? '').split(';')[0];
}

async function invite(role: 'admin' | 'reviewer' | 'viewer', name = `A ${role}`, email = `${randomUUID()}@acme.example`, on = server): Promise<{ id: number; email: string; token: string }> {
  const invited = await call(on.url, 'POST', '/users', { email, name, role }, { headers: admin });
  expect(invited.status).toBe(201);
  return { id: invited.body.id, email, token: tokenOf(invited.body.invitation_url) };
}

async function person(role: 'admin' | 'reviewer' | 'viewer', name?: string): Promise<Session & { email: string }> {
  const invited = await invite(role, name);
  const accepted = await call(server.url, 'POST', '/invitations/accept', { token: invited.token, password: PASSWORD });
  expect(accepted.status).toBe(201);
  return { cookie: cookieOf(accepted), csrfToken: accepted.body.csrf_token, userId: invited.id, email: invited.email };
}

async function newReview(): Promise<number> {
  return (await call(server.url, 'POST', '/reviews', sampleReview, { headers: agent })).body.id;
}

beforeAll(async () => {
  server = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, public_url: 'http://review.acme.example:8501' });
  const created = await call(server.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
  organizationId = created.body.organization.id;
  admin = bearer(created.body.api_key.key);
  agent = bearer((await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: admin })).body.key);
});
afterAll(() => server?.dispose());

describe('invitation links', () => {
  it('come with a new person, point at the dashboard, say whom they are for, and work once', async () => {
    const invited = await call(server.url, 'POST', '/users', { email: 'Dana@Acme.example', name: 'Dana', role: 'reviewer' }, { headers: admin });
    expect(invited.body.invitation_url).toMatch(/^http:\/\/review\.acme\.example:8501\/#\/invitation\/[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(invited.body.invitation_expires_at) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600_000);
    expect(invited.body.password_set).toBe(false);
    const token = tokenOf(invited.body.invitation_url);

    const lookedUp = await call(server.url, 'POST', '/invitations/lookup', { token });
    expect(lookedUp.body).toEqual({ email: 'dana@acme.example', name: 'Dana', organization: { id: organizationId, name: 'Acme' } });
    expectProblem(await call(server.url, 'POST', '/invitations/accept', { token, password: 'short' }), 400, /password/);

    const accepted = await call(server.url, 'POST', '/invitations/accept', { token, password: PASSWORD });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ id: invited.body.id, email: 'dana@acme.example', role: 'reviewer', password_set: true });
    expectProblem(await call(server.url, 'POST', '/invitations/accept', { token, password: 'another passphrase entirely' }), 404, /used or has expired/);
    expectProblem(await call(server.url, 'POST', '/invitations/lookup', { token }), 404);
    expect((await call(server.url, 'GET', `/users/${invited.body.id}`, undefined, { headers: admin })).body.password_set).toBe(true);
  });

  it.each([
    ['one character repeated', 'aaaaaaaaaaaa', /^password is one character repeated/],
    ['one emoji repeated', '🙂'.repeat(10), /^password is one character repeated/],
    ['a common password', 'password123', /^password is one of the most common passwords/],
    ['a common password in other case', 'QwertyUiop', /^password is one of the most common passwords/],
  ])('refuse %s as the new password with 400, and stay usable', async (_what, password, detail) => {
    const invited = await invite('reviewer');
    const refused = await call(server.url, 'POST', '/invitations/accept', { token: invited.token, password });
    expectProblem(refused, 400, detail);
    expect(refused.body.detail).toMatch(/choose another/);
    expect((await call(server.url, 'POST', '/invitations/lookup', { token: invited.token })).status).toBe(200);
  });

  it('can be issued anew, which ends the earlier one, and not for a deactivated person', async () => {
    const invited = await invite('viewer');
    const renewed = await call(server.url, 'POST', `/users/${invited.id}/invitation`, undefined, { headers: admin });
    expect(renewed.status).toBe(201);
    expectProblem(await call(server.url, 'POST', '/invitations/lookup', { token: invited.token }), 404);
    expect((await call(server.url, 'POST', '/invitations/lookup', { token: tokenOf(renewed.body.invitation_url) })).status).toBe(200);

    await call(server.url, 'DELETE', `/users/${invited.id}`, undefined, { headers: admin });
    expectProblem(await call(server.url, 'POST', '/invitations/accept', { token: tokenOf(renewed.body.invitation_url), password: PASSWORD }), 404);
    expectProblem(await call(server.url, 'POST', `/users/${invited.id}/invitation`, undefined, { headers: admin }), 409, /deactivated/);
  });
});

describe('signing in and out', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie that opens the API, Secure only over https', async () => {
    const reviewer = await person('reviewer');
    const signedIn = await call(server.url, 'POST', '/sessions', { email: reviewer.email.toUpperCase(), password: PASSWORD });
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^greenlight_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Strict$/);
    expect(signedIn.body).toMatchObject({ user: { id: reviewer.userId, role: 'reviewer' }, organization: { id: organizationId, name: 'Acme' }, csrf_token: expect.any(String) });

    const current = await call(server.url, 'GET', '/sessions/current', undefined, { headers: { cookie: cookieOf(signedIn) } });
    expect(current.body).toEqual(signedIn.body);
    expect((await call(server.url, 'GET', '/reviews', undefined, { headers: { cookie: cookieOf(signedIn) } })).status).toBe(200);

    const behindTls = await call(server.url, 'POST', '/sessions', { email: reviewer.email, password: PASSWORD }, { headers: { 'x-forwarded-proto': 'https' } });
    expect(behindTls.headers.get('set-cookie')).toMatch(/; Secure$/);
  });

  it('gives an unknown e-mail, a wrong password and a deactivated person the same answer', async () => {
    const leaving = await person('reviewer');
    await call(server.url, 'DELETE', `/users/${leaving.userId}`, undefined, { headers: admin });
    const reviewer = await person('reviewer');
    const answers = [
      await call(server.url, 'POST', '/sessions', { email: 'nobody@acme.example', password: PASSWORD }),
      await call(server.url, 'POST', '/sessions', { email: reviewer.email, password: 'not the password at all' }),
      await call(server.url, 'POST', '/sessions', { email: leaving.email, password: PASSWORD }),
    ];
    for (const answer of answers) {
      expectProblem(answer, 401);
      expect(answer.body.detail).toBe('the e-mail address or the password is wrong');
      expect(answer.headers.get('set-cookie')).toBeNull();
    }
  });

  it('asks which organization when one e-mail and password open several', async () => {
    const other = await call(server.url, 'POST', '/organizations', { name: 'Globex' }, { headers: bearer(OPERATOR_KEY) });
    const email = `${randomUUID()}@both.example`;
    const inAcme = await invite('reviewer', 'Pat', email);
    const inGlobex = await call(server.url, 'POST', '/users', { email, name: 'Pat', role: 'viewer' }, { headers: bearer(other.body.api_key.key) });
    await call(server.url, 'POST', '/invitations/accept', { token: inAcme.token, password: PASSWORD });
    await call(server.url, 'POST', '/invitations/accept', { token: tokenOf(inGlobex.body.invitation_url), password: PASSWORD });

    const ambiguous = await call(server.url, 'POST', '/sessions', { email, password: PASSWORD });
    expectProblem(ambiguous, 409, /several organizations/);
    expect(ambiguous.body.organizations).toEqual([
      { id: organizationId, name: 'Acme' },
      { id: other.body.organization.id, name: 'Globex' },
    ]);
    const chosen = await call(server.url, 'POST', '/sessions', { email, password: PASSWORD, organization_id: other.body.organization.id });
    expect(chosen.body.user).toMatchObject({ id: inGlobex.body.id, role: 'viewer' });
  });

  it('ends the session on the server when signing out, which needs the CSRF token', async () => {
    const reviewer = await person('reviewer');
    expectProblem(await call(server.url, 'DELETE', '/sessions/current', undefined, { headers: { cookie: reviewer.cookie } }), 403, /CSRF/);
    const signedOut = await call(server.url, 'DELETE', '/sessions/current', undefined, { headers: withSession(reviewer) });
    expect(signedOut.status).toBe(204);
    expect(signedOut.headers.get('set-cookie')).toMatch(/^greenlight_session=; Path=\/; Max-Age=0/);
    expectProblem(await call(server.url, 'GET', '/reviews', undefined, { headers: { cookie: reviewer.cookie } }), 401, /session has ended/);
    expectProblem(await call(server.url, 'GET', '/sessions/current', undefined, { headers: { cookie: reviewer.cookie } }), 401);
  });

  it.runIf(TEST_DATABASE_URL)('opens a session in every API process on the database, and ends it in every one', async () => {
    const other = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, database_url: server.config.database_url });
    try {
      const reviewer = await person('reviewer');
      expect((await call(other.url, 'GET', '/reviews', undefined, { headers: { cookie: reviewer.cookie } })).status).toBe(200);
      expect((await call(server.url, 'DELETE', '/sessions/current', undefined, { headers: withSession(reviewer) })).status).toBe(204);
      expectProblem(await call(other.url, 'GET', '/reviews', undefined, { headers: { cookie: reviewer.cookie } }), 401);
    } finally {
      await other.dispose();
    }
  });

  it('ends every session of a person who is deactivated', async () => {
    const reviewer = await person('reviewer');
    await call(server.url, 'DELETE', `/users/${reviewer.userId}`, undefined, { headers: admin });
    expectProblem(await call(server.url, 'GET', '/reviews', undefined, { headers: { cookie: reviewer.cookie } }), 401);
  });

  it('writes signing in and setting a password to the audit log, as the person', async () => {
    const reviewer = await person('reviewer', 'Avery Auditable');
    const entries = (await call(server.url, 'GET', `/audit-logs?target_type=user&target_id=${reviewer.userId}`, undefined, { headers: admin })).body.entries;
    expect(entries.map((entry: { action: string }) => entry.action)).toEqual(['user.password_set', 'user.created']);
    expect(entries[0].actor).toEqual({ type: 'user', id: `user:${reviewer.userId}`, label: 'Avery Auditable' });
  });
});

describe('what a session may do', () => {
  it('refuses a change without the CSRF token, and makes it with the token', async () => {
    const reviewer = await person('reviewer');
    const reviewId = await newReview();
    const decide = (headers: Record<string, string>): Promise<JsonResponse> => call(server.url, 'POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve' }, { headers });
    expectProblem(await decide({ cookie: reviewer.cookie }), 403, /CSRF/);
    expectProblem(await decide({ cookie: reviewer.cookie, 'x-csrf-token': 'forged' }), 403, /CSRF/);
    expect((await call(server.url, 'GET', `/reviews/${reviewId}/decision`, undefined, { headers: { cookie: reviewer.cookie } })).body).toBeNull();
    expect((await decide(withSession(reviewer))).status).toBe(200);
  });

  it("attributes a decision to the signed-in person, never to a typed name or someone else's id", async () => {
    const reviewer = await person('reviewer', 'Riley Reviewer');
    const other = await person('reviewer');
    const reviewId = await newReview();
    const decide = (body: object): Promise<JsonResponse> => call(server.url, 'POST', `/reviews/${reviewId}/decide`, body, { headers: withSession(reviewer) });
    expectProblem(await decide({ decision_type: 'approve', reviewer_name: 'Somebody Else' }), 400, /reviewer_name/);
    expectProblem(await decide({ decision_type: 'approve', reviewer_id: other.userId }), 403, /as yourself/);
    const decided = await decide({ decision_type: 'approve', notes: 'Looks right.' });
    expect(decided.body).toMatchObject({ reviewer_id: reviewer.userId, reviewer_name: 'Riley Reviewer', notes: 'Looks right.' });
  });

  it('lets a viewer read the queue but not decide, nor manage the organization', async () => {
    const viewer = await person('viewer');
    const reviewId = await newReview();
    expect((await call(server.url, 'GET', `/reviews/${reviewId}`, undefined, { headers: withSession(viewer) })).status).toBe(200);
    expectProblem(await call(server.url, 'POST', `/reviews/${reviewId}/decide`, { decision_type: 'approve' }, { headers: withSession(viewer) }), 403, /viewer/);
    expectProblem(await call(server.url, 'GET', '/users', undefined, { headers: withSession(viewer) }), 403, /admin/);
  });

  it('lets a signed-in admin manage the organization as an admin key does', async () => {
    const signedInAdmin = await person('admin');
    const key = await call(server.url, 'POST', `/organizations/${organizationId}/api-keys`, { name: 'made in the console', scope: 'agent' }, { headers: withSession(signedInAdmin) });
    expect(key.status).toBe(201);
    expect((await call(server.url, 'DELETE', `/api-keys/${key.body.id}`, undefined, { headers: withSession(signedInAdmin) })).status).toBe(204);
  });

  it('keeps MCP for API keys', async () => {
    const reviewer = await person('reviewer');
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const answer = await call(server.url, 'POST', '/mcp', initialize, { headers: { ...withSession(reviewer), accept: 'application/json, text/event-stream' } });
    expectProblem(answer, 403, /API key/);
  });
});

describe('an admin key deciding', () => {
  it('names an active reviewer or admin of the organization, whose name the decision then carries', async () => {
    const reviewer = await person('reviewer', 'Robin');
    const viewer = await person('viewer');
    const leaving = await person('reviewer');
    await call(server.url, 'DELETE', `/users/${leaving.userId}`, undefined, { headers: admin });
    const reviewId = await newReview();
    const decide = (body: object): Promise<JsonResponse> => call(server.url, 'POST', `/reviews/${reviewId}/decide`, body, { headers: admin });

    expectProblem(await decide({ decision_type: 'reject' }), 400, /reviewer_id/);
    expectProblem(await decide({ decision_type: 'reject', reviewer_id: viewer.userId }), 422, /viewer/);
    expectProblem(await decide({ decision_type: 'reject', reviewer_id: leaving.userId }), 422, /deactivated/);
    expectProblem(await decide({ decision_type: 'reject', reviewer_id: 999_999 }), 404);
    expect((await decide({ decision_type: 'reject', reviewer_id: reviewer.userId })).body).toMatchObject({ reviewer_id: reviewer.userId, reviewer_name: 'Robin' });
  });
});

describe('sessions across a restart', () => {
  it('keeps a session open when the server restarts', async () => {
    const own = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY });
    let restarted: TestServer | undefined;
    try {
      const created = await call(own.url, 'POST', '/organizations', { name: 'Restarting' }, { headers: bearer(OPERATOR_KEY) });
      const invited = await call(own.url, 'POST', '/users', { email: 'sam@restart.example', name: 'Sam', role: 'reviewer' }, { headers: bearer(created.body.api_key.key) });
      const accepted = await call(own.url, 'POST', '/invitations/accept', { token: tokenOf(invited.body.invitation_url), password: PASSWORD });
      await own.close();

      restarted = await startTestServer({ edition: 'hosted', operator_key: OPERATOR_KEY, data_dir: own.dataDir, database_url: own.config.database_url });
      const current = await call(restarted.url, 'GET', '/sessions/current', undefined, { headers: { cookie: cookieOf(accepted) } });
      expect(current.status).toBe(200);
      expect(current.body).toMatchObject({ user: { email: 'sam@restart.example' }, csrf_token: accepted.body.csrf_token });
    } finally {
      await restarted?.dispose();
      await own.dispose();
    }
  });
});
