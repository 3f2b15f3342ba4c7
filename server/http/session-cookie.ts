import type { Request, Response } from 'express';
import { SESSION_LIFETIME_MS } from '../domain/people/sign-in';
import { matchesSecret } from './auth';

/** The dashboard's session (hosted edition): HttpOnly, so no script reads it; SameSite=Strict, so no other site sends it. */
export const SESSION_COOKIE = 'greenlight_session';

/** Whether the request carries the session's CSRF token (`X-CSRF-Token`), compared in constant time. */
export function carriesCsrfToken(req: Request, csrfToken: string): boolean {
  const presented = req.get('x-csrf-token');
  return presented !== undefined && matchesSecret(csrfToken)(presented);
}

/** The session token the request's `Cookie` header carries, or null. */
export function sessionTokenOf(req: Request): string | null {
  const header = req.get('cookie');
  if (!header) return null;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0 && pair.slice(0, separator).trim() === SESSION_COOKIE) {
      const value = pair.slice(separator + 1).trim();
      return /^[A-Za-z0-9_-]{1,100}$/.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * Whether the browser reached the dashboard over https: `public_url` says so, or the TLS proxy
 * in front (`X-Forwarded-Proto`, which the dashboard's own proxy passes on). A client that lies
 * about it only loses its own cookie.
 */
function overHttps(req: Request, secureCookies: boolean): boolean {
  return secureCookies || req.get('x-forwarded-proto')?.split(',')[0].trim().toLowerCase() === 'https';
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])].join('; ');
}

export function setSessionCookie(req: Request, res: Response, token: string, secureCookies: boolean): void {
  res.append('Set-Cookie', cookie(token, SESSION_LIFETIME_MS / 1000, overHttps(req, secureCookies)));
}

export function clearSessionCookie(req: Request, res: Response, secureCookies: boolean): void {
  res.append('Set-Cookie', cookie('', 0, overHttps(req, secureCookies)));
}
