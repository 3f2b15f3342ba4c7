import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import { answerAfterBody, MAX_DROPPED_BYTES, STALLED_BODY_MS } from './unread-body';

/**
 * How long a client may take over its request, and how many connections the server holds.
 * Waiting for an answer is not limited here: a blocking create or a long-poll waits as long as
 * its own limit says, once its request has arrived.
 */
export interface ConnectionLimits {
  /** Most connections with a request under way; past it a new request gets 503 (`/health` is still answered). */
  maxConnections: number;
  /**
   * Connections held past `maxConnections`, idle ones or those of a burst not yet read, and the
   * listen backlog: one round of accepting takes in about that many at once.
   */
  burstReserve: number;
  /** From a connection's first byte (or its previous answer) to the end of the request's headers. */
  headersTimeoutMs: number;
  /** From the first byte to the end of the body: an upload of max_attachment_bytes must fit in it. */
  requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open. */
  keepAliveTimeoutMs: number;
}

/** Descriptors kept for what is not a socket: the database, attachments, logs, pipes. */
const RESERVED_DESCRIPTORS = 64;
/** Connections that are not waiting for a decision: the dashboards, uploads, reads. */
const OTHER_CONNECTIONS = 1_024;
/** At most this share of the descriptors left for sockets goes to those the process opens itself. */
const OUTGOING_SHARE = 1 / 4;
/** This share of the descriptors left for client connections is kept for a burst of them. */
const BURST_SHARE = 1 / 4;
/** Node's own listen backlog, and so the largest burst kept for. */
const MAX_BURST = 511;

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
  return fileLimit - RESERVED_DESCRIPTORS;
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
 * but never so many connections that accepting one more fails for want of a file descriptor.
 * That failure refuses with no answer at all: the system's accept fails, and Node's event loop
 * then accepts and closes every connection waiting to be accepted, an agent's request among them.
 * So the descriptors left once the sockets the process opens itself are counted hold the
 * connections plus a reserve for a burst of them, and the listen backlog is no deeper than it.
 */
export function connectionLimitsFor(needs: DescriptorNeeds, fileLimit: number | null = openFileLimit()): ConnectionLimits {
  const wanted = needs.maxWaitingRequests + OTHER_CONNECTIONS;
  const forClients = fileLimit === null ? null : socketDescriptors(fileLimit) - needs.outgoingSockets;
  const burstReserve = forClients === null ? MAX_BURST : Math.max(1, Math.min(MAX_BURST, Math.floor(forClients * BURST_SHARE)));
  return {
    maxConnections: Math.max(1, forClients === null ? wanted : Math.min(wanted, forClients - burstReserve)),
    burstReserve,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 120_000,
    keepAliveTimeoutMs: 5_000,
  };
}

interface Connection {
  /**
   * Requests received on it and not yet answered, refusals included: almost always one, so a
   * list (a set costs a hash table for each of the thousands of agents holding a request open).
   */
  unanswered: http.ServerResponse[];
  /** The turn in which it last fell idle: when it was accepted, or its last answer went out. */
  idleSince: number;
  /** Where the listeners that every socket and response share report to. */
  readonly keptBy: ClientConnections;
}

/** A socket with its connection's record, which is how the shared listeners find it. */
const CONNECTION = Symbol('connection');
type TrackedSocket = Socket & { [CONNECTION]?: Connection };

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

/** A problem document as the bytes of an HTTP/1.1 answer that closes the connection, for a socket Node's HTTP server does not answer on. */
function rawProblem(status: number, detail: string, extraHeaders = ''): string {
  const body = JSON.stringify({ type: 'about:blank', title: http.STATUS_CODES[status], status, detail });
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\n` +
    `X-Content-Type-Options: nosniff\r\n${extraHeaders}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

function refuseConnection(socket: Socket, detail: string): void {
  socket.on('error', () => undefined);
  socket.end(rawProblem(503, detail, 'Retry-After: 5\r\n'));
  socket.destroySoon();
}

const isHealthCheck = (req: http.IncomingMessage): boolean => req.method === 'GET' && req.url === '/health';

/** What Node's parser says of a request it could not read, as an answer: status and detail. */
function unreadableAnswer(error: NodeJS.ErrnoException): [number, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request did not arrive in time; nothing was processed'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large; nothing was processed'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'the chunk extensions of the request body are too large; nothing was processed'];
    case 'HPE_INVALID_URL':
      return [400, 'the request target holds a character not allowed there (percent-encode anything but printable ASCII); nothing was processed'];
    default:
      return [400, `the request is not valid HTTP/1.1 (${error.code ?? 'unreadable'}); nothing was processed`];
  }
}

/**
 * Answers on `socket` with a problem document and closes it once the client has sent the rest
 * of its request, or stopped sending, or sent too much: closed with data unread, the connection
 * would be reset, and a reset can destroy the answer before the client reads it.
 */
function answerThenClose(socket: Socket, status: number, detail: string, deadlineMs: number): void {
  socket.end(rawProblem(status, detail));
  // A connection that never sent a byte (one that timed out silent) has nothing to be reset over.
  if (socket.bytesRead === 0) return void socket.destroySoon();
  let dropped = 0;
  const close = (): void => void socket.destroy();
  const stalled = setTimeout(close, STALLED_BODY_MS);
  const deadline = setTimeout(close, deadlineMs);
  socket.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DROPPED_BYTES) close();
    else stalled.refresh();
  });
  // The client has sent all it will: nothing is left to reset over.
  socket.once('end', close);
  socket.once('close', () => {
    clearTimeout(stalled);
    clearTimeout(deadline);
  });
}

/**
 * A connection that fell idle this many turns (rounds of the event loop's I/O) ago or more has had
 * a whole round since: had its client sent a request, it would have been read by then. One newer
 * may have a request waiting to be read, which closing it would reset, unanswered.
 */
const TURNS_TO_SEND = 2;

/**
 * The client connections of one server: it caps those with a request under way (past the cap a
 * new request is refused with 503; `/health` is always answered), holds idle ones up to a reserve
 * past the cap, bounds how long a request may take to arrive, and drains them on shutdown: from
 * then on no request is taken on any connection (a 503 with `Connection: close`), every request
 * already taken is answered, and only then does a connection close.
 *
 * Node cannot stop accepting for a while: a listening handle has no pause, and
 * `server.maxConnections` closes what it would not take, unanswered. Whatever arrives is accepted,
 * each connection a file descriptor, so the descriptors hold the cap plus a reserve as deep as the
 * listen backlog (`connectionLimitsFor`). Only once that is full does a new connection take the
 * place of the one idle the longest, one that never carried a request first, and only of one that
 * has had its turn to send a request: closing connections at once, as they were accepted, closed
 * those of the same burst whose requests had arrived but not yet been read, an agent's among a
 * flood of idle ones. With none such, the new connection is refused with 503.
 */
export class ClientConnections {
  private readonly open = new Map<Socket, Connection>();
  /** Idle connections that never carried a request, longest idle first. */
  private readonly idleUnused = new Map<Socket, Connection>();
  /** Idle connections kept alive after an answer, longest idle first. */
  private readonly idleKeptAlive = new Map<Socket, Connection>();
  /** Connections whose request could not be read, answered and closing: neither idle nor busy. */
  private readonly unreadableAnswered = new Set<Socket>();
  /** Requests received and not answered yet, on every connection. */
  private unanswered = 0;
  private draining = false;
  private settledListeners: Array<() => void> = [];
  /** Rounds of the event loop's I/O, counted while connections that fell idle wait for theirs (`TURNS_TO_SEND`). */
  private turn = 0;
  private turnsToCount = 0;
  private turnEnding = false;

  /** `server` must have been created with `serverTimeouts(limits)` and no request listener: `app` becomes it. */
  constructor(
    readonly server: http.Server,
    readonly limits: ConnectionLimits,
    app: RequestListener,
  ) {
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', this.listener(app));
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.unreadable(error, socket));
  }

  /**
   * A request Node's parser could not read: answered with a problem document (Node's own answer
   * is a bare status line) once, however often the parser says so again as the rest arrives.
   */
  private unreadable(error: NodeJS.ErrnoException, socket: Socket): void {
    if (this.unreadableAnswered.has(socket)) return;
    const connection = this.open.get(socket);
    // Not answered in the middle of another answer (a request that took too long may have none yet: Node's own answers it too).
    const answering = connection && connection.unanswered.some((res) => res.headersSent);
    if (!connection || answering || error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    // Not closed to make room while its answer goes out.
    this.unreadableAnswered.add(socket);
    this.idleUnused.delete(socket);
    this.idleKeptAlive.delete(socket);
    const [status, detail] = unreadableAnswer(error);
    answerThenClose(socket, status, detail, this.limits.headersTimeoutMs);
  }

  private listener(app: RequestListener): RequestListener {
    return (req, res) => {
      // A refusal too waits for the request's body: closed with it unread, the connection is reset and the answer lost.
      answerAfterBody(req, res);
      const connection = this.open.get(req.socket);
      if (!connection) return refuse(res, 503, 'this connection is being closed; retry on a new one', 1);
      const busy = this.busyConnections();
      this.taken(req.socket, connection, res);
      if (this.draining) {
        return refuse(res, 503, 'the server is shutting down; this request was not processed — retry shortly', 5);
      }
      if (busy >= this.limits.maxConnections && !isHealthCheck(req)) {
        return refuse(res, 503, `the server holds its maximum of ${this.limits.maxConnections} connections, all busy; retry shortly`, 5);
      }
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
      if (connection.unanswered.length === 0) socket.destroy();
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
      if (connection.unanswered.some((res) => !res.req.complete)) socket.destroy();
    }
    return this.unanswered;
  }

  private admit(socket: Socket): void {
    if (this.draining) return void socket.destroy();
    if (this.open.size >= this.limits.maxConnections + this.limits.burstReserve) {
      const idle = this.longestIdleClosable();
      if (!idle) return refuseConnection(socket, `the server holds its maximum of ${this.limits.maxConnections} connections, all busy; retry shortly`);
      this.close(idle);
    }
    const connection: Connection = { unanswered: [], idleSince: this.turn, keptBy: this };
    (socket as TrackedSocket)[CONNECTION] = connection;
    this.open.set(socket, connection);
    this.fellIdle(socket, connection, this.idleUnused);
    // `on`, not `once`: a socket closes once, and `once` would add a wrapper and its state to every connection.
    socket.on('close', ClientConnections.socketClosed);
  }

  /**
   * Listeners that every socket and every response share, finding their connection on the
   * socket, rather than closures of each: thousands of agents may each hold a connection with
   * a request open, for as long as they wait.
   */
  private static socketClosed(this: TrackedSocket): void {
    this[CONNECTION]?.keptBy.forget(this);
  }

  private static responseEnded(this: http.ServerResponse): void {
    const socket = this.req.socket as TrackedSocket;
    const connection = socket[CONNECTION];
    connection?.keptBy.answered(socket, connection, this);
  }

  private busyConnections(): number {
    return this.open.size - this.idleUnused.size - this.idleKeptAlive.size - this.unreadableAnswered.size;
  }

  private taken(socket: Socket, connection: Connection, res: http.ServerResponse): void {
    this.idleUnused.delete(socket);
    this.idleKeptAlive.delete(socket);
    // A list of one made as one: pushed onto an empty list, V8 would reserve room for seventeen.
    if (connection.unanswered.length === 0) connection.unanswered = [res];
    else connection.unanswered.push(res);
    this.unanswered += 1;
    // Both fire for an answer sent (the second finds it answered); `once` would add a wrapper and its state to each.
    res.on('finish', ClientConnections.responseEnded);
    res.on('close', ClientConnections.responseEnded);
  }

  private answered(socket: Socket, connection: Connection, res: http.ServerResponse): void {
    const index = connection.unanswered.indexOf(res);
    if (index === -1) return;
    connection.unanswered.splice(index, 1);
    this.unanswered -= 1;
    if (!this.draining) {
      if (connection.unanswered.length === 0 && this.open.has(socket)) this.fellIdle(socket, connection, this.idleKeptAlive);
      return;
    }
    if (connection.unanswered.length === 0) socket.destroySoon();
    if (this.unanswered > 0) return;
    const listeners = this.settledListeners;
    this.settledListeners = [];
    for (const listener of listeners) listener();
  }

  /** Files `socket` as idle since this turn, the newest of `idle`, and has turns counted until it may be closed. */
  private fellIdle(socket: Socket, connection: Connection, idle: Map<Socket, Connection>): void {
    connection.idleSince = this.turn;
    idle.set(socket, connection);
    this.turnsToCount = TURNS_TO_SEND;
    this.endTurnSoon();
  }

  /** Ends the turn once this round of I/O is over (`setImmediate` runs right after it). */
  private endTurnSoon(): void {
    if (this.turnEnding) return;
    this.turnEnding = true;
    setImmediate(() => {
      this.turnEnding = false;
      this.endTurn();
    });
  }

  private endTurn(): void {
    this.turn += 1;
    this.turnsToCount -= 1;
    if (this.turnsToCount > 0) this.endTurnSoon();
  }

  /** The connection idle the longest, one that never carried a request first, if it has had its turn to send one. */
  private longestIdleClosable(): Socket | undefined {
    for (const idle of [this.idleUnused, this.idleKeptAlive]) {
      const [oldest] = idle;
      if (oldest && oldest[1].idleSince <= this.turn - TURNS_TO_SEND) return oldest[0];
    }
    return undefined;
  }

  private close(socket: Socket): void {
    this.forget(socket);
    socket.destroy();
  }

  private forget(socket: Socket): void {
    this.open.delete(socket);
    this.idleUnused.delete(socket);
    this.idleKeptAlive.delete(socket);
    this.unreadableAnswered.delete(socket);
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
