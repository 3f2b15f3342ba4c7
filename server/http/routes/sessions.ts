import { type Request, type Response, Router } from 'express';
import type { SignedIn, SignInService } from '../../domain/people/sign-in';
import { clientAddress } from '../client-address';
import { sendProblem } from '../problems';
import { carriesCsrfToken, clearSessionCookie, sessionTokenOf, setSessionCookie } from '../session-cookie';
import { TokenBuckets } from '../token-buckets';

/**
 * Failed sign-ins are counted three ways, and an attempt is tried only while each count allows:
 * per e-mail address and client (10 at once, then 5 a minute), which stops one machine trying
 * one person's password; per client (30 at once, then 10 a minute: an office shares one
 * address), which stops one machine trying many people's; and per e-mail address (100 at once,
 * then 30 a minute), which slows many machines trying one person's. A single client cannot
 * reach the last — the first stops it long before — so no one stranger can lock a person out of
 * their own account. Clients are told apart by `clientAddress`, so a stranger's failures through
 * the dashboard server or a load balancer refuse no one else.
 */
const FAILURES_PER_EMAIL_AND_CLIENT = { perMinute: 5, burst: 10 };
const FAILURES_PER_CLIENT = { perMinute: 10, burst: 30 };
const FAILURES_PER_EMAIL = { perMinute: 30, burst: 100 };

/**
 * An attempt spends a try of each count before its password is checked, so attempts sent at
 * once cannot outrun the limits while scrypt runs; one that was no failure gives them back.
 */
class FailedSignIns {
  private readonly byEmailAndClient: TokenBuckets;
  private readonly byClient: TokenBuckets;
  private readonly byEmail: TokenBuckets;

  constructor(clock: () => number) {
    this.byEmailAndClient = new TokenBuckets(FAILURES_PER_EMAIL_AND_CLIENT.perMinute, FAILURES_PER_EMAIL_AND_CLIENT.burst, clock);
    this.byClient = new TokenBuckets(FAILURES_PER_CLIENT.perMinute, FAILURES_PER_CLIENT.burst, clock);
    this.byEmail = new TokenBuckets(FAILURES_PER_EMAIL.perMinute, FAILURES_PER_EMAIL.burst, clock);
  }

  /** Spends a try of every count, or of none: the seconds to wait when one has none left, else 0. */
  begin(email: string, client: string): number {
    const counts = this.countsOf(email, client);
    const waitSeconds = Math.max(...counts.map(([buckets, key]) => buckets.waitSeconds(key)));
    if (waitSeconds === 0) for (const [buckets, key] of counts) buckets.take(key);
    return waitSeconds;
  }

  forgive(email: string, client: string): void {
    for (const [buckets, key] of this.countsOf(email, client)) buckets.giveBack(key);
  }

  private countsOf(email: string, client: string): Array<[TokenBuckets, string]> {
    return [
      [this.byEmailAndClient, `${email}\n${client}`],
      [this.byClient, client],
      [this.byEmail, email],
    ];
  }
}

interface SignInBody {
  email: string;
  password: string;
  organization_id?: number;
}

/**
 * Signing in to the dashboard (hosted edition only: 404 in the self-hosted one). These paths
 * need no API key: they read and set the session cookie themselves.
 *
 * @openapi
 * components:
 *   schemas:
 *     SignIn:
 *       type: object
 *       additionalProperties: false
 *       required: [email, password]
 *       properties:
 *         email: { type: string, minLength: 1, maxLength: 320 }
 *         password: { type: string, minLength: 1, maxLength: 1000 }
 *         organization_id: { type: integer, minimum: 1, description: 'Only when the same e-mail and password open several organizations (the 409 lists them).' }
 *       example: { email: dana@example.com, password: correct horse battery staple }
 *     Session:
 *       type: object
 *       required: [user, organization, teams, csrf_token, expires_at]
 *       properties:
 *         user: { $ref: '#/components/schemas/User' }
 *         organization:
 *           type: object
 *           required: [id, name]
 *           properties:
 *             id: { type: integer }
 *             name: { type: string }
 *         teams:
 *           type: array
 *           items: { type: string }
 *           description: "The names of the person's teams: reviews assigned to one are theirs too (Mine)."
 *         csrf_token: { type: string, description: 'Send it as X-CSRF-Token on every request of this session that changes something.' }
 *         expires_at: { type: string, format: date-time }
 *       example:
 *         user: { id: 5, organization_id: 1, email: dana@example.com, name: Dana Reviewer, role: reviewer, is_active: true, password_set: true, slack_user_id: null, created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z' }
 *         organization: { id: 1, name: Acme Support }
 *         teams: [finance]
 *         csrf_token: 3q2-7wXkVbq3uYQq1m8p0pZ3QJxwzv2rVn6mK0m9pQc
 *         expires_at: '2026-12-01T09:00:00.000Z'
 *     InvitationToken:
 *       type: object
 *       additionalProperties: false
 *       required: [token]
 *       properties:
 *         token: { type: string, minLength: 1, maxLength: 100, description: 'The part of the invitation link after #/invitation/.' }
 *       example: { token: Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5 }
 *     InvitationAccept:
 *       type: object
 *       additionalProperties: false
 *       required: [token, password]
 *       properties:
 *         token: { type: string, minLength: 1, maxLength: 100 }
 *         password: { type: string, minLength: 10, maxLength: 1000, description: 'At least 10 characters, neither one character repeated nor one of the most common passwords (400); a passphrase of a few words is best.' }
 *       example: { token: Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5, password: correct horse battery staple }
 *     InvitationDetails:
 *       type: object
 *       required: [email, name, organization]
 *       properties:
 *         email: { type: string }
 *         name: { type: string }
 *         organization:
 *           type: object
 *           required: [id, name]
 *           properties:
 *             id: { type: integer }
 *             name: { type: string }
 *       example: { email: dana@example.com, name: Dana Reviewer, organization: { id: 1, name: Acme Support } }
 *   responses:
 *     NotSignedIn:
 *       description: The e-mail address or the password is wrong (signing in), or no live session (the rest).
 *       content:
 *         application/problem+json:
 *           schema: { $ref: '#/components/schemas/Problem' }
 *           example: { type: about:blank, title: Unauthorized, status: 401, detail: the e-mail address or the password is wrong }
 *     SessionStarted:
 *       description: Signed in. The session cookie (HttpOnly, SameSite=Strict, Secure over https) comes with it.
 *       headers:
 *         Set-Cookie: { schema: { type: string }, description: 'greenlight_session=…; Path=/; Max-Age=604800; HttpOnly; SameSite=Strict' }
 *       content:
 *         application/json:
 *           schema: { $ref: '#/components/schemas/Session' }
 */
export function sessionRoutes(signIn: SignInService, secureCookies: boolean, clock: () => number = Date.now): Router {
  const router = Router();
  const failures = new FailedSignIns(clock);

  const started = (req: Request, res: Response, signedIn: SignedIn): void => {
    setSessionCookie(req, res, signedIn.token, secureCookies);
    res.status(201).json(signedIn.session);
  };

  /**
   * @openapi
   * /sessions:
   *   post:
   *     operationId: signIn
   *     tags: [sessions]
   *     summary: Sign in to the dashboard with e-mail and password
   *     description: >-
   *       Hosted edition only. An unknown e-mail, a wrong password and a deactivated person all
   *       get the same 401. Failed attempts are limited per e-mail and client address (10 at
   *       once, then 5 a minute), per client address (30 at once, then 10 a minute) and per
   *       e-mail (100 at once, then 30 a minute): past that, 429 with Retry-After. The client
   *       address is the one trusted proxies name in X-Forwarded-For (trusted_proxies).
   *     x-edition: hosted
   *     security: []
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/SignIn' }
   *     responses:
   *       '201': { $ref: '#/components/responses/SessionStarted' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/NotSignedIn' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '409':
   *         description: The e-mail and password open several organizations; sign in again with one of their ids.
   *         content:
   *           application/problem+json:
   *             schema:
   *               allOf:
   *                 - { $ref: '#/components/schemas/Problem' }
   *                 - type: object
   *                   properties:
   *                     organizations:
   *                       type: array
   *                       items: { type: object, properties: { id: { type: integer }, name: { type: string } } }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/sessions', async (req: Request<Record<string, string>, unknown, SignInBody>, res) => {
    const client = clientAddress(req);
    const email = req.body.email.trim().toLowerCase();
    const waitSeconds = failures.begin(email, client);
    if (waitSeconds > 0) {
      res.set('Retry-After', String(waitSeconds));
      return sendProblem(res, 429, `too many failed sign-ins; try again in ${waitSeconds} s`);
    }
    let failed = false;
    try {
      started(req, res, await signIn.signIn(email, req.body.password, req.body.organization_id));
    } catch (error) {
      failed = (error as { status?: number }).status === 401;
      throw error;
    } finally {
      if (!failed) failures.forgive(email, client);
    }
  });

  /**
   * @openapi
   * /sessions/current:
   *   get:
   *     operationId: getCurrentSession
   *     tags: [sessions]
   *     summary: Who is signed in, and the session's CSRF token
   *     description: Hosted edition only. 401 without a live session cookie.
   *     x-edition: hosted
   *     security: []
   *     responses:
   *       '200':
   *         description: The session.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/Session' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '401': { $ref: '#/components/responses/NotSignedIn' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *   delete:
   *     operationId: signOut
   *     tags: [sessions]
   *     summary: Sign out
   *     description: >-
   *       Hosted edition only. Ends the session on the server (the cookie opens nothing
   *       afterwards, wherever a copy of it is) and clears the cookie. Needs the session's
   *       X-CSRF-Token. Signing out without a session changes nothing.
   *     x-edition: hosted
   *     security: []
   *     responses:
   *       '204': { description: Signed out. }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.get('/sessions/current', async (req, res) => {
    const token = sessionTokenOf(req);
    const session = token === null ? null : await signIn.current(token);
    if (!session) {
      if (token !== null) clearSessionCookie(req, res, secureCookies);
      return sendProblem(res, 401, 'not signed in');
    }
    res.json(session);
  });

  router.delete('/sessions/current', async (req, res) => {
    const token = sessionTokenOf(req);
    const found = token === null ? null : await signIn.authenticate(token);
    if (found) {
      if (!carriesCsrfToken(req, found.csrfToken)) {
        return sendProblem(res, 403, "signing out needs the session's CSRF token in the X-CSRF-Token header");
      }
      await signIn.signOut(token as string);
    }
    clearSessionCookie(req, res, secureCookies);
    res.status(204).end();
  });

  /**
   * @openapi
   * /invitations/lookup:
   *   post:
   *     operationId: lookUpInvitation
   *     tags: [sessions]
   *     summary: Whom an invitation link is for
   *     description: >-
   *       Hosted edition only. Lets the invitation page say which account it sets up. The
   *       token travels in the body, never in a URL a log could keep.
   *     x-edition: hosted
   *     security: []
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/InvitationToken' }
   *     responses:
   *       '200':
   *         description: The invited person.
   *         content:
   *           application/json:
   *             schema: { $ref: '#/components/schemas/InvitationDetails' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   */
  router.post('/invitations/lookup', async (req: Request<Record<string, string>, unknown, { token: string }>, res) => {
    res.json(await signIn.invitation(req.body.token));
  });

  /**
   * @openapi
   * /invitations/accept:
   *   post:
   *     operationId: acceptInvitation
   *     tags: [sessions]
   *     summary: Set a password from an invitation link, and sign in
   *     description: >-
   *       Hosted edition only. Uses up the link: it works once, for 7 days, and only while it
   *       is the person's latest.
   *     x-edition: hosted
   *     security: []
   *     requestBody:
   *       required: true
   *       content:
   *         application/json:
   *           schema: { $ref: '#/components/schemas/InvitationAccept' }
   *     responses:
   *       '201': { $ref: '#/components/responses/SessionStarted' }
   *       '400': { $ref: '#/components/responses/BadRequest' }
   *       '403': { $ref: '#/components/responses/Forbidden' }
   *       '404': { $ref: '#/components/responses/NotFound' }
   *       '413': { $ref: '#/components/responses/PayloadTooLarge' }
   *       '415': { $ref: '#/components/responses/UnsupportedMediaType' }
   *       '429': { $ref: '#/components/responses/TooManyRequests' }
   *       '507': { $ref: '#/components/responses/InsufficientStorage' }
   */
  router.post('/invitations/accept', async (req: Request<Record<string, string>, unknown, { token: string; password: string }>, res) => {
    started(req, res, await signIn.acceptInvitation(req.body.token, req.body.password));
  });

  return router;
}
