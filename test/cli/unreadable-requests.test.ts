import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { makeTempDir } from '../support/temp';

let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;

/** In a process of its own, as a client meets it: in this one, reads and the reset would take turns otherwise than on a network. */
beforeAll(async () => {
  temp = makeTempDir('greenlight-unreadable-');
  server = await startCli(['--api-only', '--port', String(await freePort())], { cwd: temp.dir });
});
afterAll(async () => {
  await stopProgram(server);
  temp?.remove();
});

interface Exchange {
  /** Everything the server sent after its answer to the first request. */
  answer: string;
  /** What the socket met instead of a clean close (ECONNRESET), if anything. */
  error: string | null;
}

/** The length of the first complete answer in `received`, or null while it is still arriving. */
function firstAnswerLength(received: Buffer): number | null {
  const headEnd = received.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
  return received.length >= headEnd + 4 + length ? headEnd + 4 + length : null;
}

/**
 * On one connection, a valid request and, once its answer has been read, `request`, in one write;
 * what comes back is read until the server closes the connection.
 */
function afterValidRequest(request: Buffer): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    let received = Buffer.alloc(0);
    let firstLength: number | null = null;
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (firstLength !== null || (firstLength = firstAnswerLength(received)) === null) return;
      socket.write(request);
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code ?? failure.message));
    socket.on('close', () => resolve({ answer: received.subarray(firstLength ?? received.length).toString('latin1'), error }));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

function expectProblemAnswer(exchange: Exchange, status: number, detail: RegExp): void {
  expect(exchange.error).toBeNull();
  const [head, body] = exchange.answer.split('\r\n\r\n');
  expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(head).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
  expect(JSON.parse(body)).toMatchObject({ type: 'about:blank', status, detail: expect.stringMatching(detail) });
}

describe('a request Node cannot parse, on a connection a valid request used before', () => {
  it('with a raw non-ASCII byte in its target and a body, is answered 400 problem+json, never reset, 25 times out of 25', async () => {
    const request = Buffer.concat([
      Buffer.from('POST /reviews/caf'),
      Buffer.from([0xe9]),
      Buffer.from(`/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${256 * 1024}\r\n\r\n`),
      Buffer.alloc(256 * 1024, ' '),
    ]);
    for (let attempt = 0; attempt < 25; attempt++) {
      expectProblemAnswer(await afterValidRequest(request), 400, /request target holds a character not allowed there/);
    }
  });

  it('with headers past the limit, is answered 431 problem+json', async () => {
    const request = Buffer.from(`GET /reviews HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'x'.repeat(32 * 1024)}\r\n\r\n`);
    expectProblemAnswer(await afterValidRequest(request), 431, /headers are too large/);
  });
});
