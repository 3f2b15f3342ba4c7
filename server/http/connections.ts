import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import { answerAfterBody } from './unread-body';

/**
 * How long a client may take over its request, and how many connections the server holds.
 * Waiting for an answer is not limited here: a blocking create or a long-poll waits as long as
 * its own limit says, once its request has arrived.
 */
export interface ConnectionLimits {
  /** Most client connections held; past it idle ones make room, busy ones are refused with 503. */
  maxConnections: number;
  /** From a connection's first byte (or its previous answer) to the end of the request's headers. */
  headersTimeoutMs: number;
  /** From the first byte to the end of the body: an upload of max_attachment_bytes must fit in it. */
  requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open. */
  keepAliveTimeoutMs: number;
}

/** Past the cap, a few more connections are let in for `/health` alone: a monitor still sees the server. */
const HEALTH_ONLY_CONNECTIONS = 8;
/** Descriptors kept for what is not a client connection: the database, attachments, logs, pipes. */
const RESERVED_DESCRIPTORS = 64;
/** Connections that are not waiting for a decision: the dashboards, uploads, reads. */
const OTHER_CONNECTIONS = 1_024;
/** At most this share of the descriptors left for sockets goes to those the process opens itself. */
const OUTGOING_SHARE = 1 / 4;

/** The soft limit on open files (`ulimit -n`), where the system says it; null where it does not. */
function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : null;
  } catch {
    return null;
  }
}

/** What the process needs descriptors for besides its client connections. */
export interface DescriptorNeeds {
  /** `max_waiting_requests`: agents each holding a connection while they wait. */
  maxWaitingRequests: number;
  /** Sockets the process opens itself at once (webhook deliveries), as `outgoingSocketsFor` granted them. */
  outgoingSockets: number;
}

/** Descriptors left for sockets, client or outgoing, once the reserved ones are set aside. */
function socketDescriptors(fileLimit: number): number {
  return fileLimit - RESERVED_DESCRIPTORS - HEALTH_ONLY_CONNECTIONS;
}

/**
 * How many sockets of its own (webhook deliveries) the process may hold at once: `wanted`, unless
 * the open-file limit is so low that they would crowd out the client connections.
 */
export function outgoingSocketsFor(wanted: number, fileLimit: number | null = openFileLimit()): number {
  if (fileLimit === null) return wanted;
  return Math.max(1, Math.min(wanted, Math.floor(socketDescriptors(fileLimit) * OUTGOING_SHARE)));
}

/**
 * The limits of the API: room for every agent `max_waiting_requests` lets wait plus the rest,
 * but never so many connections that accepting one more fails for want of a file descriptor —
 * which refuses everyone, `/health` included, with no answer at all. The sockets the process
 * opens itself come out of the same descriptors.
 */
export function connectionLimitsFor(needs: DescriptorNeeds, fileLimit: number | null = openFileLimit()): ConnectionLimits {
  const wanted = needs.maxWaitingRequests + OTHER_CONNECTIONS;
  const affordable = fileLimit === null ? wanted : socketDescriptors(fileLimit) - needs.outgoingSockets;
  return {
    maxConnections: Math.max(1, Math.min(wanted, affordable)),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 120_000,
    keepAliveTimeoutMs: 5_000,
  };
}

interface Connection {
  /** Requests received on it and not yet answered. */
  unanswered: Set<http.ServerResponse>;
  /** Let in past the cap: only `/health` is answered on it. */
  healthOnly: boolean;
}

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A problem document written without Express: these answers are given before a request reaches the app. */
function refuse(res: http.ServerResponse, status: number, detail: string, retryAfterSeconds: number): void {
  const body = JSON.stringify({ type: 'about:blank', title: http.STATUS_CODES[status], status, detail });
  res.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'Retry-After': String(retryAfterSeconds),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  });
  res.end(body);
}

function refuseConnection(socket: Socket, detail: string): void {
  const body = JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail });
  socket.on('error', () => undefined);
  socket.end(
    'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 5\r\nConnection: close\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

/**
 * The client connections of one server: it caps them (an idle one makes room for a new one;
 * past the cap only `/health` is served), bounds how long a request may take to arrive, and
 * drains them on shutdown: from then on no request is taken on any connection (a 503 with
 * `Connection: close`), every request already taken is answered, and only then does a
 * connection close.
 */
export class ClientConnections {
  private readonly open = new Map<Socket, Connection>();
  /** Requests received and not answered yet, on every connection. */
  private unanswered = 0;
  private draining = false;
  private settledListeners: Array<() => void> = [];

  /** `server` must have been created with `serverTimeouts(limits)` and no request listener: `app` becomes it. */
  constructor(
    readonly server: http.Server,
    private readonly limits: ConnectionLimits,
    app: RequestListener,
  ) {
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', this.listener(app));
  }

  private listener(app: RequestListener): RequestListener {
    return (req, res) => {
      const connection = this.open.get(req.socket);
      if (!connection) return refuse(res, 503, 'this connection is being closed; retry on a new one', 1);
      if (this.draining) {
        return refuse(res, 503, 'the server is shutting down; this request was not processed — retry shortly', 5);
      }
      if (connection.healthOnly && !(req.method === 'GET' && req.url === '/health')) {
        return refuse(res, 503, `the server holds its maximum of ${this.limits.maxConnections} connections, all busy; retry shortly`, 5);
      }
      connection.unanswered.add(res);
      this.unanswered += 1;
      const done = (): void => this.answered(req.socket, connection, res);
      res.once('finish', done);
      res.once('close', done);
      answerAfterBody(req, res);
      app(req, res);
    };
  }

  /**
   * Takes no more requests: idle connections close now, answers under way say
   * `Connection: close`, and each connection closes once its answers are sent.
   */
  drain(): void {
    this.draining = true;
    for (const [socket, connection] of this.open) {
      if (connection.unanswered.size === 0) socket.destroy();
      for (const res of connection.unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
    }
  }

  /** Resolves once every request taken has been answered. */
  settled(): Promise<void> {
    if (this.unanswered === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledListeners.push(resolve));
  }

  /**
   * Closes the connections whose request has not fully arrived (a slow upload: nothing of it is
   * stored before its last byte), and returns how many requests are still being answered.
   */
  dropUnfinishedRequests(): number {
    for (const [socket, connection] of this.open) {
      if ([...connection.unanswered].some((res) => !res.req.complete)) socket.destroy();
    }
    return this.unanswered;
  }

  private admit(socket: Socket): void {
    if (this.draining) return void socket.destroy();
    let healthOnly = false;
    if (this.open.size >= this.limits.maxConnections && !this.evictIdle()) {
      if (this.open.size >= this.limits.maxConnections + HEALTH_ONLY_CONNECTIONS) {
        return refuseConnection(socket, `the server holds its maximum of ${this.limits.maxConnections} connections, all busy; retry shortly`);
      }
      healthOnly = true;
    }
    this.open.set(socket, { unanswered: new Set(), healthOnly });
    // Its unanswered requests are counted off as their responses close with it.
    socket.once('close', () => this.open.delete(socket));
  }

  /** Closes the oldest connection that has no request under way (the map keeps them in the order they came). */
  private evictIdle(): boolean {
    for (const [socket, connection] of this.open) {
      if (connection.unanswered.size === 0 && !connection.healthOnly) {
        this.open.delete(socket);
        socket.destroy();
        return true;
      }
    }
    return false;
  }

  private answered(socket: Socket, connection: Connection, res: http.ServerResponse): void {
    if (!connection.unanswered.delete(res)) return;
    this.unanswered -= 1;
    if (!this.draining) return;
    if (connection.unanswered.size === 0) socket.destroySoon();
    if (this.unanswered > 0) return;
    const listeners = this.settledListeners;
    this.settledListeners = [];
    for (const listener of listeners) listener();
  }
}

/** Node's own request timeouts, set to `limits`: they are options of the server's constructor. */
export function serverTimeouts(limits: ConnectionLimits): http.ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often those timeouts are checked: a header-less connection otherwise lingers 30 s past its limit.
    connectionsCheckingInterval: 1_000,
  };
}
