import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Principal } from '../domain/shared/principal';
import type { SessionTransport } from './streamable-http';

export interface McpSessionOptions {
  /** A session no request has touched for this long is closed (clients that never say goodbye). */
  idleMs?: number;
  /**
   * Most open sessions of the process, so that memory does not grow without bound (1,000).
   * At the cap, the tenant holding the most sessions gives up its least recently used idle one;
   * when no larger tenant has an idle session, a new client gets 503.
   */
  maxSessions?: number;
  /**
   * Most open sessions of one caller: an API key, or in the self-hosted edition the installation's
   * key (or none) from one client address (20: an agent needs one, a few more across restarts).
   */
  maxSessionsPerCaller?: number;
  /**
   * Most open sessions of one tenant: an organization, or in the self-hosted edition one client
   * address (200, a fifth of the process's cap: room for an organization's ten busy agent keys,
   * while filling the process takes five tenants whose every session is in use).
   */
  maxSessionsPerTenant?: number;
  /** Largest JSON-RPC request body read, in bytes. */
  maxBodyBytes?: number;
}

interface Session {
  caller: string;
  tenant: string;
  /** Who opened it: only they may use it. */
  principalId: string;
  transport: SessionTransport;
  server: McpServer;
  /** Open HTTP requests: POSTs being answered and the client's GET stream. */
  inFlight: number;
  /** POSTs not yet answered (tool calls among them); the standalone GET stream is not one. */
  unanswered: Set<Promise<void>>;
  /** When a request last touched the session, as a count of requests: the least recently used goes first. */
  lastUsed: number;
  idleTimer?: NodeJS.Timeout;
}

/** Why a request is refused before any session sees it. */
interface RpcError {
  status: number;
  code: number;
  message: string;
  id?: string | number | null;
  retryAfterSeconds?: number;
}

function sendRpcError(res: ServerResponse, { status, code, message, id = null, retryAfterSeconds }: RpcError): void {
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}

const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;

type Body = { json: unknown } | RpcError | 'hung up';

/**
 * Reads a JSON-RPC body of at most `maxBytes`. Read here rather than by the transport, so that
 * its requests can be checked before the transport routes them (see SessionTransport).
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
  const tooLarge: RpcError = { status: 413, code: SERVER_ERROR, message: `Payload Too Large: Request body must not exceed ${maxBytes} bytes` };
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve(tooLarge);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (body: Body): void => {
      req.off('data', read).off('end', end).off('error', hungUp).off('close', hungUp);
      resolve(body);
    };
    const read = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) return stop(tooLarge);
      chunks.push(chunk);
    };
    const end = (): void => {
      try {
        stop({ json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        stop({ status: 400, code: PARSE_ERROR, message: 'Parse error: Invalid JSON' });
      }
    };
    const hungUp = (): void => stop('hung up');
    req.on('data', read).on('end', end).on('error', hungUp).on('close', hungUp);
  });
}

/** Whom a session counts against, and how a refusal names them. */
interface Holder {
  key: string;
  /** e.g. "of this API key", completing "too many open MCP sessions …". */
  named: string;
}

/**
 * A session counts against its caller and its tenant. In the hosted edition these are its API
 * key and the key's organization. A self-hosted installation has one key for every client, so
 * there the client's address stands for both.
 */
function holdersOf(principal: Principal, address: string): { caller: Holder; tenant: Holder } {
  const organizationId = principal.scope.organizationId;
  if (organizationId !== null) {
    return { caller: { key: principal.id, named: 'of this API key' }, tenant: { key: `organization ${organizationId}`, named: 'of this organization' } };
  }
  return { caller: { key: `${principal.id || 'no key'} from ${address}`, named: 'from this client' }, tenant: { key: `address ${address}`, named: 'from this client address' } };
}

/** A holder at its limit whose every session has a request open. */
function allInUse(holder: Holder, limit: number): RpcError {
  return {
    status: 429,
    code: SERVER_ERROR,
    retryAfterSeconds: 60,
    message:
      `too many open MCP sessions ${holder.named} (${limit}), each with a request in progress; ` +
      'end the ones you no longer use with DELETE /mcp (their Mcp-Session-Id), or wait for their calls to be answered',
  };
}

/** Sessions by whom they count against, those still being opened included. */
class Holdings {
  private readonly groups = new Map<string, Set<Session>>();

  count(key: string): number {
    return this.groups.get(key)?.size ?? 0;
  }

  sessionsOf(key: string): ReadonlySet<Session> {
    return this.groups.get(key) ?? new Set();
  }

  /** Every holder's sessions, the largest holder first. */
  largestFirst(): Array<[string, ReadonlySet<Session>]> {
    return [...this.groups].sort(([, a], [, b]) => b.size - a.size);
  }

  add(key: string, session: Session): void {
    const own = this.groups.get(key) ?? new Set();
    own.add(session);
    this.groups.set(key, own);
  }

  delete(key: string, session: Session): boolean {
    const own = this.groups.get(key);
    if (!own?.delete(session)) return false;
    if (own.size === 0) this.groups.delete(key);
    return true;
  }
}

/**
 * MCP over Streamable HTTP: one MCP server per client session, found again by the
 * `Mcp-Session-Id` header. Sessions are kept (rather than a server per request) so that a
 * client's cancellation reaches the call it cancels and progress flows on the call's stream.
 */
export class McpHttpSessions {
  private readonly sessions = new Map<string, Session>();
  /** Every session, those still being opened included, by caller and by tenant; `held` counts them all. */
  private readonly byCaller = new Holdings();
  private readonly byTenant = new Holdings();
  private held = 0;
  private uses = 0;
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly maxSessionsPerCaller: number;
  private readonly maxSessionsPerTenant: number;
  private readonly maxBodyBytes: number;
  private closed = false;

  constructor(private readonly createServer: (principal: Principal) => Promise<McpServer>, options: McpSessionOptions = {}) {
    this.idleMs = options.idleMs ?? 30 * 60_000;
    this.maxSessions = options.maxSessions ?? 1_000;
    this.maxSessionsPerCaller = options.maxSessionsPerCaller ?? 20;
    this.maxSessionsPerTenant = options.maxSessionsPerTenant ?? 200;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  }

  /** Sessions a client has opened and not closed. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Serves one request of `principal`, opening a session for an initialize request.
   * `clientAddress` is where the request comes from, as the trusted proxies name it.
   */
  async handle(req: IncomingMessage, res: ServerResponse, principal: Principal, clientAddress: string): Promise<void> {
    if (this.closed) return sendRpcError(res, { status: 503, code: SERVER_ERROR, message: 'Greenlight is shutting down' });
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      // Another caller's session is not found either: its id is not a key to what it holds.
      if (!session || session.principalId !== principal.id) {
        return sendRpcError(res, { status: 404, code: SERVER_ERROR, message: 'Session not found: start a new one with an initialize request' });
      }
      return this.serve(session, req, res);
    }
    if (req.method !== 'POST') {
      return sendRpcError(res, { status: 400, code: SERVER_ERROR, message: 'Bad request: no Mcp-Session-Id; start a session with an initialize request' });
    }
    await this.open(req, res, principal, holdersOf(principal, clientAddress));
  }

  /**
   * Closes the sessions `principalId` opened, their calls under way cancelled: its credential
   * no longer holds. A later request with one of their ids gets 404.
   */
  async closeSessionsOf(principalId: string): Promise<void> {
    const opened = [...this.sessions].filter(([, session]) => session.principalId === principalId);
    await Promise.all(opened.map(([id]) => this.close(id)));
  }

  /**
   * Closes every session once its calls have been answered (the waiters' shutdown answers the
   * waiting ones), or after `graceMs`.
   */
  async closeAll(graceMs = 2_000): Promise<void> {
    this.closed = true;
    const unanswered = [...this.sessions.values()].flatMap((session) => [...session.unanswered]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(unanswered), new Promise((done) => (timer = setTimeout(done, graceMs)))]);
    clearTimeout(timer);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
  }

  /**
   * Whether another session may be opened for these holders. A holder at its limit makes room
   * by closing its own least recently used session with no request open (a client that went away
   * without DELETE, most likely); one whose every session is in use is refused. At the process's
   * limit the room is made by the tenants that hold the most.
   */
  private roomFor(caller: Holder, tenant: Holder): RpcError | undefined {
    if (this.closed) return { status: 503, code: SERVER_ERROR, message: 'Greenlight is shutting down' };
    if (this.byCaller.count(caller.key) >= this.maxSessionsPerCaller) {
      return this.closeLeastRecentlyUsed(this.byCaller.sessionsOf(caller.key)) ? undefined : allInUse(caller, this.maxSessionsPerCaller);
    }
    if (this.byTenant.count(tenant.key) >= this.maxSessionsPerTenant) {
      return this.closeLeastRecentlyUsed(this.byTenant.sessionsOf(tenant.key)) ? undefined : allInUse(tenant, this.maxSessionsPerTenant);
    }
    if (this.held >= this.maxSessions && !this.reclaimFor(tenant)) {
      return { status: 503, code: SERVER_ERROR, message: `too many open MCP sessions (${this.maxSessions}); try again later`, retryAfterSeconds: 60 };
    }
    return undefined;
  }

  /**
   * At the process's limit, the tenant holding the most sessions gives up its least recently
   * used idle one, so that a newcomer is not refused while another tenant hoards idle sessions.
   * Only tenants holding more than the one asking give one up (or, last, the asker itself): a
   * large tenant never grows at the expense of smaller ones.
   */
  private reclaimFor(tenant: Holder): boolean {
    const own = this.byTenant.count(tenant.key);
    const givers = this.byTenant.largestFirst().filter(([key, sessions]) => sessions.size > own || key === tenant.key);
    return givers.some(([, sessions]) => this.closeLeastRecentlyUsed(sessions));
  }

  /** Closes the least recently used of `sessions` that has no request open; false when each has one. */
  private closeLeastRecentlyUsed(sessions: ReadonlySet<Session>): boolean {
    let leastRecentlyUsed: { id: string; lastUsed: number } | undefined;
    for (const { transport, inFlight, lastUsed } of sessions) {
      // A session still being opened has no id yet, and is not idle.
      const id = transport.sessionId;
      if (id !== undefined && inFlight === 0 && lastUsed < (leastRecentlyUsed?.lastUsed ?? Infinity)) leastRecentlyUsed = { id, lastUsed };
    }
    if (!leastRecentlyUsed) return false;
    // Its counts drop at once; the server closes in the background.
    void this.close(leastRecentlyUsed.id);
    return true;
  }

  private async open(req: IncomingMessage, res: ServerResponse, principal: Principal, { caller, tenant }: { caller: Holder; tenant: Holder }): Promise<void> {
    // Loaded with the first session rather than at start: most installations never serve MCP
    // over HTTP, and the SDK costs about 16 MB of resident memory.
    const [{ SessionTransport }, server] = await Promise.all([import('./streamable-http.js'), this.createServer(principal)]);
    // Checked and held in one step, so that initialize requests arriving together cannot all pass.
    const refusal = this.roomFor(caller, tenant);
    if (refusal) {
      await server.close();
      return sendRpcError(res, refusal);
    }
    const session: Session = {
      caller: caller.key,
      tenant: tenant.key,
      principalId: principal.id,
      server,
      transport: new SessionTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, session);
        },
        onsessionclosed: (id) => void this.close(id),
      }),
      inFlight: 0,
      unanswered: new Set(),
      lastUsed: ++this.uses,
    };
    this.hold(session);
    try {
      await server.connect(session.transport);
      await this.serve(session, req, res);
    } finally {
      // Anything but a valid initialize request leaves no session behind.
      if (session.transport.sessionId === undefined) {
        this.release(session);
        await server.close();
      }
    }
  }

  private async serve(session: Session, req: IncomingMessage, res: ServerResponse): Promise<void> {
    session.inFlight += 1;
    session.lastUsed = ++this.uses;
    clearTimeout(session.idleTimer);
    let admitted: { done(answered: boolean): void } | undefined;
    const answered = new Promise<void>((done) =>
      res.once('close', () => {
        session.inFlight -= 1;
        session.unanswered.delete(answered);
        admitted?.done(res.statusCode < 300);
        this.armIdleTimer(session);
        done();
      }),
    );
    if (req.method !== 'POST') return session.transport.handleRequest(req, res);
    session.unanswered.add(answered);
    const body = await readBody(req, this.maxBodyBytes);
    if (body === 'hung up') return;
    if (!('json' in body)) return sendRpcError(res, body);
    const admission = session.transport.admit(body.json);
    if ('code' in admission) return sendRpcError(res, { status: 400, ...admission });
    admitted = admission;
    await session.transport.handleRequest(req, res, body.json);
  }

  private armIdleTimer(session: Session): void {
    const id = session.transport.sessionId;
    if (id === undefined || session.inFlight > 0 || !this.sessions.has(id)) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => void this.close(id), this.idleMs);
    session.idleTimer.unref();
  }

  private hold(session: Session): void {
    this.byCaller.add(session.caller, session);
    this.byTenant.add(session.tenant, session);
    this.held += 1;
  }

  private release(session: Session): void {
    if (!this.byCaller.delete(session.caller, session)) return;
    this.byTenant.delete(session.tenant, session);
    this.held -= 1;
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.release(session);
    clearTimeout(session.idleTimer);
    await session.server.close();
  }
}
