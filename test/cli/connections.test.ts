import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionLimitsFor } from '../../server/http/connections';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { inParallel } from '../../bench/http';
import { jsonRequest, send } from '../support/raw-http';
import { eventually, expectProblem, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Low enough that a test can reach it; the server derives its connection cap from it. */
const OPEN_FILE_LIMIT = 256;
const LIMITS = connectionLimitsFor({ maxWaitingRequests: 10_000, outgoingSockets: 0 }, OPEN_FILE_LIMIT);
const CAP = LIMITS.maxConnections;

let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;
let api: string;

/** `greenlight start --api-only` under `ulimit -n`, as on a machine with a small open-file limit. */
beforeAll(async () => {
  temp = makeTempDir('greenlight-connections-');
  server = await startCli(['--api-only', '--port', String(await freePort())], {
    cwd: temp.dir,
    via: ['sh', '-c', `ulimit -n ${OPEN_FILE_LIMIT} && exec "$0" "$@"`],
  });
  api = server.url;
});

afterAll(async () => {
  await stopProgram(server);
  temp?.remove();
});

function connectOneIdle(): Promise<net.Socket> {
  const socket = net.connect(Number(new URL(api).port), '127.0.0.1');
  socket.on('error', () => undefined);
  // Read, so that the server's answer and its end of the connection are seen.
  socket.resume();
  return new Promise<net.Socket>((resolve) => socket.once('connect', () => resolve(socket)));
}

/**
 * `count` connections that send nothing, opened a listen backlog's worth at a time. Past the
 * backlog the system drops handshakes and completes them on a retry, or, retried in vain, never:
 * a connection this side holds open that the server never saw, and that nothing ever closes.
 */
async function connectIdle(count: number): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  while (sockets.length < count) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(LIMITS.burstReserve, count - sockets.length) }, connectOneIdle))));
  }
  return sockets;
}

/** `size` connections that never send a byte, each opened again as soon as the server closes it. */
class IdleFlood {
  /** Connections opened so far. */
  connections = 0;
  private stopping = false;
  private readonly sockets = new Set<net.Socket>();
  private opened = 0;
  private onceAllOpen: () => void = () => undefined;

  constructor(private readonly size: number) {
    for (let i = 0; i < size; i++) this.connect();
  }

  /** Resolves once each of the flood's connections has been accepted (or closed) once. */
  started(): Promise<void> {
    return new Promise((resolve) => {
      this.onceAllOpen = resolve;
      if (this.opened >= this.size) resolve();
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const closed = [...this.sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }

  private connect(): void {
    const socket = net.connect(Number(new URL(api).port), '127.0.0.1');
    this.sockets.add(socket);
    let counted = false;
    const count = (): void => {
      if (counted) return;
      counted = true;
      this.connections += 1;
      if (++this.opened === this.size) this.onceAllOpen();
    };
    socket.once('connect', count);
    socket.on('error', () => undefined);
    socket.resume();
    socket.once('close', () => {
      count();
      this.sockets.delete(socket);
      if (!this.stopping) this.connect();
    });
  }
}

/** An event stream: a connection the server is busy answering for as long as it stays open. */
function openEventStream(): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${api}/events`, { agent: false }, (response) => {
      expect(response.statusCode).toBe(200);
      resolve(request);
    });
    request.on('error', reject);
  });
}

describe('a flood of connections against a small open-file limit', () => {
  it('makes idle connections give way: twice the cap of idle ones, and agents and /health are still answered', async () => {
    const flood = await connectIdle(CAP * 2);
    const created = await fetch(`${api}/reviews`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sampleReview) });
    expect(created.status).toBe(201);
    expect((await fetch(`${api}/health`)).status).toBe(200);
    // Those not made to give way are closed once they have sent no request for the header timeout.
    await Promise.all(flood.map((socket) => (socket.closed ? undefined : new Promise((resolve) => socket.once('close', resolve)))));
  });

  it('answers every request agents send during a flood of idle connections past the cap, 2xx or 503, none reset', async () => {
    const flood = new IdleFlood(CAP * 4);
    const outcomes = new Map<string, number>();
    try {
      await flood.started();
      // The flood presses on the server from the moment it makes an idle connection give way (each
      // reconnects at once): the agents' requests go out while it does.
      await eventually(() => flood.connections > CAP * 4, 30_000, 'the server to close one of the idle connections');
      await inParallel(Array.from({ length: 200 }, (_, i) => i), 8, async (i) => {
        const request = i % 4 === 0 ? { method: 'GET', path: '/health' } : jsonRequest('POST', '/reviews', { ...sampleReview, proposed_action: `During the flood ${i}` });
        const outcome = await send(api, request, { timeoutMs: 60_000 }).then(
          (answer) => String(answer.status),
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      });
    } finally {
      await flood.stop();
    }
    expect(Object.fromEntries([...outcomes].filter(([outcome]) => !['200', '201', '503'].includes(outcome)))).toEqual({});
  });

  it('refuses a new request with a clear 503 when every connection is busy, and still answers /health', async () => {
    const streams = await Promise.all(Array.from({ length: CAP }, () => openEventStream()));
    try {
      const refused = await fetch(`${api}/reviews`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sampleReview) });
      const body = await refused.json();
      expectProblem({ status: refused.status, headers: refused.headers, body }, 503, new RegExp(`maximum of ${CAP} connections, all busy`));
      expect(refused.headers.get('retry-after')).toBe('5');
      const health = await fetch(`${api}/health`);
      expect(health.status).toBe(200);
    } finally {
      for (const stream of streams) stream.destroy();
    }
  });
});
