import { createHash, hash, randomBytes } from 'node:crypto';
import { AppError } from '../shared/errors';
import { type PasswordHashing, passwordHashing, refuseGuessablePassword } from './passwords';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { Principal } from '../shared/principal';
import type { SignInRepository, UserCredentials } from './ports';
import type { InvitationView, SessionView, UserRecord } from './records';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A session ends a week after signing in, or sooner: signing out, or the person deactivated. */
export const SESSION_LIFETIME_MS = 7 * DAY_MS;
export const INVITATION_LIFETIME_MS = 7 * DAY_MS;

export interface SignedIn {
  /** The session cookie's value: shown to nobody but the browser. */
  token: string;
  session: SessionView;
}

/** Cookie tokens, invitation tokens: 256 random bits. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a token: a copy of the database opens no session and no invitation. */
export function tokenHash(token: string): string {
  // One-shot: every request of a signed-in person hashes its session token.
  return hash('sha256', token, 'hex');
}

/**
 * A session's CSRF token, derived from its cookie's token: a page of the dashboard's own origin
 * can read it (from the session's answer), a cross-site page cannot, and it tells nothing of the
 * cookie itself.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update('greenlight csrf token\0').update(sessionToken, 'utf8').digest('base64url');
}

/** The `Principal.id` of a person, whichever session they sign in with. */
export function userPrincipalId(userId: number): string {
  return `user:${userId}`;
}

/** A signed-in person, as the rest of the service sees callers. */
export function userPrincipal(user: Pick<UserRecord, 'id' | 'organization_id' | 'name' | 'role'>): Principal {
  return {
    kind: 'user',
    scope: { organizationId: user.organization_id },
    id: userPrincipalId(user.id),
    label: user.name,
    user: { id: user.id, name: user.name, role: user.role },
  };
}

/** Invitation links: the person opens one to set a password (a new one for a forgotten password). */
export class Invitations {
  constructor(
    private readonly accounts: SignInRepository,
    /** The dashboard as people reach it; links point at its invitation page. */
    private readonly publicUrl: string,
    private readonly clock: Clock,
  ) {}

  /** A new link for `userId`, which replaces any earlier one; its token travels in the URL's fragment, never to a server's logs. */
  async issue(tx: Tx, userId: number): Promise<{ invitation_url: string; invitation_expires_at: string }> {
    const token = newToken();
    const expiresAt = this.clock() + INVITATION_LIFETIME_MS;
    await this.accounts.setInvitation(tx, userId, tokenHash(token), expiresAt);
    return { invitation_url: `${this.publicUrl}/#/invitation/${token}`, invitation_expires_at: new Date(expiresAt).toISOString() };
  }
}

const WRONG_CREDENTIALS = 'the e-mail address or the password is wrong';
const INVITATION_GONE = 'this invitation link is unknown, has been used or has expired; ask an admin of your organization for a new one';

/** Signing in and out of the hosted edition's dashboard, and setting a password from an invitation. */
export class SignInService {
  constructor(
    private readonly accounts: SignInRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock,
    private readonly passwords: PasswordHashing = passwordHashing(),
  ) {}

  /**
   * A new session for the person with this e-mail and password. An unknown address, a wrong
   * password and a deactivated person get the same answer, after the same work.
   */
  async signIn(email: string, password: string, organizationId?: number): Promise<SignedIn> {
    const candidates = (await this.accounts.findByEmail(email.trim().toLowerCase())).filter(
      (candidate) => organizationId === undefined || candidate.user.organization_id === organizationId,
    );
    const matching: UserCredentials[] = [];
    for (const candidate of candidates) {
      if (await this.passwords.verify(password, candidate.passwordHash ?? this.passwords.nobodysHash)) matching.push(candidate);
    }
    if (candidates.length === 0) await this.passwords.verify(password, this.passwords.nobodysHash);
    if (matching.length === 0) throw new AppError(401, WRONG_CREDENTIALS);
    if (matching.length > 1) {
      throw new AppError(409, 'this e-mail address and password open several organizations: sign in again naming one (organization_id)', {
        organizations: matching.map(({ user, organizationName }) => ({ id: user.organization_id, name: organizationName })),
      });
    }
    return this.startSession(matching[0], 'user.signed_in');
  }

  /** Who an invitation link is for, so its page can say which account it sets up. */
  async invitation(token: string): Promise<InvitationView> {
    const found = await this.accounts.findByInvitation(tokenHash(token), this.clock());
    if (!found) throw new AppError(404, INVITATION_GONE);
    return { email: found.user.email, name: found.user.name, organization: { id: found.user.organization_id, name: found.organizationName } };
  }

  /** Sets the invited person's password, uses up the link, and signs them in. */
  async acceptInvitation(token: string, password: string): Promise<SignedIn> {
    const found = await this.accounts.findByInvitation(tokenHash(token), this.clock());
    if (!found) throw new AppError(404, INVITATION_GONE);
    refuseGuessablePassword(password);
    const passwordHash = await this.passwords.hash(password);
    return this.startSession(found, 'user.password_set', (tx) => this.accounts.setPassword(tx, found.user.id, passwordHash, this.clock()));
  }

  /**
   * Who a cookie's token signs in, on every request, or null: unknown, expired, or its person
   * deactivated.
   */
  async authenticate(token: string): Promise<{ principal: Principal; csrfToken: string } | null> {
    const found = await this.accounts.findSession(tokenHash(token), this.clock());
    return found && { principal: userPrincipal(found.user), csrfToken: csrfTokenOf(token) };
  }

  /** The session as the dashboard shows it, or null. */
  async current(token: string): Promise<SessionView | null> {
    const found = await this.accounts.findSession(tokenHash(token), this.clock());
    return found && viewOf(found, token, found.expiresAt, await this.accounts.teamNamesOf(found.user.id));
  }

  /**
   * Ends the session, and the person's live streams in every process. Streams are not told apart
   * by the session that opened them: those of the person's other sessions end too, and their
   * clients reconnect with the sessions they still have.
   */
  async signOut(token: string): Promise<void> {
    const found = await this.accounts.findSession(tokenHash(token), this.clock());
    if (!found) return;
    const principal = userPrincipal(found.user);
    await this.unitOfWork.run(async (tx) => {
      await this.accounts.deleteSession(tx, tokenHash(token));
      tx.audit({ organization_id: found.user.organization_id, action: 'user.signed_out', target_type: 'user', target_id: found.user.id, data: {} });
      tx.revoke(principal.id);
    }, { by: principal });
  }

  private async startSession(credentials: UserCredentials, action: string, before?: (tx: Tx) => Promise<void>): Promise<SignedIn> {
    const token = newToken();
    const now = this.clock();
    const expiresAt = now + SESSION_LIFETIME_MS;
    const { user } = credentials;
    await this.unitOfWork.run(async (tx) => {
      await before?.(tx);
      await this.accounts.deleteExpiredSessions(tx, user.id, now);
      await this.accounts.insertSession(tx, { token_hash: tokenHash(token), user_id: user.id, created_at: now, expires_at: expiresAt });
      tx.audit({ organization_id: user.organization_id, action, target_type: 'user', target_id: user.id, data: {} });
    }, { by: userPrincipal(user) });
    const teams = await this.accounts.teamNamesOf(user.id);
    return { token, session: viewOf({ ...credentials, user: { ...user, password_set: true } }, token, expiresAt, teams) };
  }
}

function viewOf(credentials: UserCredentials, token: string, expiresAt: number, teams: string[]): SessionView {
  return {
    user: credentials.user,
    organization: { id: credentials.user.organization_id, name: credentials.organizationName },
    teams,
    csrf_token: csrfTokenOf(token),
    expires_at: new Date(expiresAt).toISOString(),
  };
}
