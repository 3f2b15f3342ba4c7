import net from 'node:net';
import os from 'node:os';
import type { ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler } from 'express';
import { isLoopback } from '../config/settings';
import { sendProblem } from './problems';

/**
 * Defences of a server that every web page the reviewer opens can send requests to. A page
 * cannot read the answers of another origin, but it can make the browser send simple
 * requests (form posts) anywhere, and it can point a domain of its own at 127.0.0.1 (DNS
 * rebinding) to become "same-origin" with this server.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `127.0.0.1:8000` → `127.0.0.1`, `[::1]:8000` → `[::1]`; '' when it is no host at all. */
function hostnameOf(hostHeader: string): string {
  const match = /^(\[[0-9a-f:.]*\]|[^:[\]]*)(?::\d{0,5})?$/i.exec(hostHeader.trim());
  return match ? match[1].toLowerCase() : '';
}

/** Who can reach a server and whether it asks for a key: what its Host rule follows from. */
export interface Exposure {
  /** Bound to a loopback address: only this machine can connect. */
  loopbackOnly: boolean;
  /** Every request must carry the API key (for the dashboard: the API it forwards to does). */
  authenticated: boolean;
  /** Names besides this machine's own that an unauthenticated server answers to (`allowed_hosts`). */
  allowedHosts: readonly string[];
  /** The dashboard's address as people reach it (`public_url`; empty when unset). */
  publicUrl: string;
}

/** This machine's host name, bare and as mDNS announces it (`name.local`). */
function machineNames(): string[] {
  const name = os.hostname().toLowerCase();
  const bare = name.split('.')[0];
  return [...new Set([name, bare, `${bare}.local`])];
}

/**
 * The names a request may address this server by, or null when any will do. A DNS-rebinding
 * page reaches the server through a domain of its own, which it must send as the `Host`: a
 * loopback server answers only to loopback names, and one open to the network without a key
 * only to addresses, this machine's own names and `allowed_hosts`. With a key, a rebinding
 * page has nothing to gain: it does not have the key.
 */
function acceptedHost(exposure: Exposure): ((hostname: string) => boolean) | null {
  if (exposure.loopbackOnly) return isLoopback;
  if (exposure.authenticated) return null;
  const named = new Set([...machineNames(), ...exposure.allowedHosts.map((host) => host.toLowerCase())]);
  return (hostname) => isLoopback(hostname) || net.isIP(hostname.replace(/^\[(.*)\]$/, '$1')) !== 0 || named.has(hostname);
}

/** Answers only requests addressed to a name `acceptedHost` allows; refuses others with 403 before anything else runs. */
export function hostsAllowed(exposure: Exposure): RequestHandler {
  const accepted = acceptedHost(exposure);
  return (req, res, next) => {
    const host = req.headers.host ?? '';
    if (accepted === null || accepted(hostnameOf(host))) return next();
    const expected = exposure.loopbackOnly
      ? 'localhost, 127.0.0.1 or [::1]'
      : "this machine's addresses and names (add others to allowed_hosts)";
    sendProblem(res, 403, `this server answers only requests addressed to ${expected}, not to ${JSON.stringify(host)}`);
  };
}

const DEFAULT_PORT: Record<string, string> = { 'http:': ':80', 'https:': ':443' };

/**
 * Whether a page of `origin` may change data with a request addressed to `host`: a page of the
 * very origin the request addressed, of `public_url` (a TLS proxy in front may address the
 * server by another name), or of one of `allowed_hosts`. Every other page is foreign, on this
 * machine or elsewhere, whatever the server is bound to; so is `null` (sandboxed frames, files).
 */
function pageMayWrite(origin: string, host: string, exposure: Exposure, publicOrigin: string | null): boolean {
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return false;
  }
  if (page.protocol !== 'http:' && page.protocol !== 'https:') return false;
  if (page.origin === publicOrigin || exposure.allowedHosts.includes(page.hostname)) return true;
  const addressed = host.trim().toLowerCase();
  const defaultPort = DEFAULT_PORT[page.protocol];
  return page.host === (addressed.endsWith(defaultPort) ? addressed.slice(0, -defaultPort.length) : addressed);
}

/**
 * Refuses state changes a browser says come from another site (`Sec-Fetch-Site`) or from a
 * foreign page (`Origin`, see `pageMayWrite`). Agents and scripts send neither header and are
 * not affected. The dashboard server judges its pages here and does not pass `Origin` on: the
 * API behind it would judge a dashboard page against its own address.
 */
export function refuseCrossSiteWrites(exposure: Exposure): RequestHandler {
  const publicOrigin = exposure.publicUrl ? new URL(exposure.publicUrl).origin : null;
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.get('origin');
    const foreignOrigin = origin !== undefined && !pageMayWrite(origin, req.headers.host ?? '', exposure, publicOrigin);
    if (req.get('sec-fetch-site') !== 'cross-site' && !foreignOrigin) return next();
    sendProblem(res, 403, `requests that change data are not accepted from another site${origin ? ` (${origin})` : ''}`);
  };
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function mediaType(req: Request): string {
  return (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * State changes take `application/json`, and uploads (where `acceptsMultipart` says so)
 * `multipart/form-data`: never a urlencoded or text/plain form, which any page can post.
 * A POST must say so even without a body, so an empty cross-site form post is refused too.
 */
export function requireJsonBodies(acceptsMultipart: (req: Request) => boolean): RequestHandler {
  return (req, res, next) => {
    // A request without a body (a revocation, a team membership, a new invitation link) carries
    // nothing to misread, and a cross-site form always sends one, typed.
    if (SAFE_METHODS.has(req.method) || !hasBody(req)) return next();
    const type = mediaType(req);
    const multipart = acceptsMultipart(req);
    if (type === 'application/json' || (multipart && type === 'multipart/form-data')) return next();
    const expected = multipart ? 'multipart/form-data' : 'application/json';
    sendProblem(res, 415, `send the request body as ${expected}, not ${type || 'without a Content-Type'}`);
  };
}

/** Headers every API answer carries, unless its route sets its own or removes one. */
const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-site'],
  ['Cache-Control', 'no-store'],
];

/** Every way Node's response reads, changes or sends its headers (`writeHeader` is another name of `writeHead`). */
const HEADER_METHODS = [
  'setHeader',
  'setHeaders',
  'appendHeader',
  'getHeader',
  'getHeaders',
  'getHeaderNames',
  'getRawHeaderNames',
  'hasHeader',
  'removeHeader',
  'writeHead',
  'writeHeader',
] as const;

const GIVEN = Symbol('security headers given');

type HeaderMethod = (this: ServerResponse, ...args: unknown[]) => unknown;

/**
 * Gives every answer of `app` the API's security headers. The API serves data, never pages to
 * frame or scripts to run (the documentation pages and attachments set their own policy);
 * answers about reviews are not to be kept in shared or browser caches.
 *
 * A response gets them the first time anything reads, changes or sends its headers, so to
 * every route and library it is as if they were set on arrival (a route's own value replaces
 * one, a removal stands, a check for a header finds it), but a request held open carries no
 * header table until it is answered: an agent waits for its decision up to an hour, thousands
 * at once, and six headers set on arrival cost each of them about 0.8 KB.
 */
export function giveSecurityHeaders(app: Express): void {
  const response = app.response as unknown as Record<string, HeaderMethod>;
  const inherited = Object.getPrototypeOf(response) as Record<string, HeaderMethod>;
  const setHeader = inherited.setHeader;
  for (const name of HEADER_METHODS) {
    const original = inherited[name];
    response[name] = function (this: ServerResponse & { [GIVEN]?: true }, ...args: unknown[]): unknown {
      if (!this[GIVEN]) {
        this[GIVEN] = true;
        for (const [header, value] of SECURITY_HEADERS) setHeader.call(this, header, value);
      }
      return original.apply(this, args);
    };
  }
}
