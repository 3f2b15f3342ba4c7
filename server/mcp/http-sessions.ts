import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface McpSessionOptions {
  /** A session no request has touched for this long is closed (clients that never say goodbye). */
  idleMs?: number;
  /** Past this many open sessions a new client gets 503 instead of memory growing without bound. */
  maxSessions?: number;
  /** Largest JSON-RPC request body read, in bytes. */
  maxBodyBytes?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  inFlight: number;
  /** POSTs not yet answered (tool calls among them); the standalone GET stream is not one. */
  unanswered: Set<Promise<void>>;
  idleTimer?: NodeJS.Timeout;
}

function sendRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * MCP over Streamable HTTP: one MCP server per client session, found again by the
 * `Mcp-Session-Id` header. Sessions are kept (rather than a server per request) so that a
 * client's cancellation reaches the call it cancels and progress flows on the call's stream.
 */
export class McpHttpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly maxBodyBytes: number;
  private closed = false;

  constructor(private readonly createServer: () => Promise<McpServer>, options: McpSessionOptions = {}) {
    this.idleMs = options.idleMs ?? 30 * 60_000;
    this.maxSessions = options.maxSessions ?? 1_000;
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.closed) return sendRpcError(res, 503, 'Greenlight is shutting down');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) return sendRpcError(res, 404, 'Session not found: start a new one with an initialize request');
      return this.serve(session, req, res);
    }
    if (req.method !== 'POST') return sendRpcError(res, 400, 'Bad request: no Mcp-Session-Id; start a session with an initialize request');
    if (this.sessions.size >= this.maxSessions) {
      res.setHeader('Retry-After', '60');
      return sendRpcError(res, 503, `too many open MCP sessions (${this.maxSessions}); try again later`);
    }
    await this.open(req, res);
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

  private async open(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Loaded with the first session rather than at start: most installations never serve MCP
    // over HTTP, and the SDK costs about 16 MB of resident memory.
    const [{ StreamableHTTPServerTransport }, server] = await Promise.all([import('./streamable-http.js'), this.createServer()]);
    const session: Session = {
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, session);
        },
        onsessionclosed: (id) => void this.close(id),
        maxRequestBodySize: this.maxBodyBytes,
      }),
      inFlight: 0,
      unanswered: new Set(),
    };
    await session.server.connect(session.transport);
    await this.serve(session, req, res);
    // Anything but a valid initialize request leaves no session behind.
    if (session.transport.sessionId === undefined) await session.server.close();
  }

  private async serve(session: Session, req: IncomingMessage, res: ServerResponse): Promise<void> {
    session.inFlight += 1;
    clearTimeout(session.idleTimer);
    const answered = new Promise<void>((done) =>
      res.once('close', () => {
        session.inFlight -= 1;
        session.unanswered.delete(answered);
        this.armIdleTimer(session);
        done();
      }),
    );
    if (req.method === 'POST') session.unanswered.add(answered);
    await session.transport.handleRequest(req, res);
  }

  private armIdleTimer(session: Session): void {
    const id = session.transport.sessionId;
    if (id === undefined || session.inFlight > 0 || !this.sessions.has(id)) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => void this.close(id), this.idleMs);
    session.idleTimer.unref();
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    clearTimeout(session.idleTimer);
    await session.server.close();
  }
}
