import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { jsonRequest, multipart, type RawRequest, send } from '../support/raw-http';
import { expectProblem, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

/** util-linux `prlimit` changes the open-file limit of a running process: the server's, here. */
const canLimit = spawnSync('prlimit', ['--version']).status === 0;

let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;
/** One connection, opened while descriptors were plenty: the requests below need no new one to arrive. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  if (!canLimit) return;
  temp = makeTempDir('greenlight-out-of-files-');
  server = await startCli(['--api-only', '--port', String(await freePort())], { cwd: temp.dir });
});

afterAll(async () => {
  agent.destroy();
  await stopProgram(server);
  temp?.remove();
});

/** The lowest descriptor number the server has free: as its soft limit, every file or socket it opens next fails with EMFILE. */
function lowestFreeDescriptor(pid: number): number {
  const used = new Set(fs.readdirSync(`/proc/${pid}/fd`).map(Number));
  let free = 0;
  while (used.has(free)) free += 1;
  return free;
}

function openFileLimit(pid: number): number {
  return Number(/^Max open files\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'))![1]);
}

function setOpenFileLimit(pid: number, soft: number): void {
  expect(spawnSync('prlimit', ['--pid', String(pid), `--nofile=${soft}:`]).status).toBe(0);
}

async function upload(reviewId: number): Promise<RawRequest> {
  const form = await multipart({ file: new Blob(['the log the agent attached']) });
  return { method: 'POST', path: `/reviews/${reviewId}/attachments`, ...form };
}

describe('a server out of file descriptors', () => {
  const title = `answers a write that needs one 503 with Retry-After, stores nothing, stays up, and takes the same write once descriptors are free${canLimit ? '' : ' (skipped: prlimit is not installed)'}`;
  it.skipIf(!canLimit)(title, async () => {
    const pid = server.child.pid!;
    const review = JSON.parse((await send(server.url, jsonRequest('POST', '/reviews', sampleReview), { agent })).body.toString('utf8')).id as number;
    const limit = openFileLimit(pid);
    setOpenFileLimit(pid, lowestFreeDescriptor(pid));
    try {
      const refused = await send(server.url, await upload(review), { agent });
      expectProblem(refused, 503, /could not open a file it needs .* nothing was stored; retry shortly/);
      expect(refused.headers['retry-after']).toBe('5');
    } finally {
      setOpenFileLimit(pid, limit);
    }
    const listed = JSON.parse((await send(server.url, { method: 'GET', path: `/reviews/${review}/attachments` }, { agent })).body.toString('utf8'));
    expect(listed.count).toBe(0);
    expect((await send(server.url, await upload(review), { agent })).status).toBe(201);
    expect(server.child.exitCode).toBeNull();
  });
});
