import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionLimitsFor } from '../../server/http/connections';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { expectProblem, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Low enough that a test can reach it; the server derives its connection cap from it. */
const OPEN_FILE_LIMIT = 256;
const CAP = connectionLimitsFor({ maxWaitingRequests: 10_000, outgoingSockets: 0 }, OPEN_FILE_LIMIT).maxConnections;

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

function connectIdle(count: number): Promise<net.Socket[]> {
  const { port } = new URL(api);
  return Promise.all(
    Array.from({ length: count }, () => {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      // Read, so that the server's answer and its end of the connection are seen.
      socket.resume();
      return new Promise<net.Socket>((resolve) => socket.once('connect', () => resolve(socket)));
    }),
  );
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
