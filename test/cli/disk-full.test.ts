import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { call, expectProblem, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

/**
 * The server runs in a mount namespace of its own (util-linux `unshare`, as an unprivileged
 * user too) with a small tmpfs as its working directory: a real full disk, seen by nobody else.
 */
const canIsolate = spawnSync('unshare', ['-rm', 'true']).status === 0;
const DISK = '4m';
const FILE_BYTES = 256 * 1024;

let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;
let api: string;

beforeAll(async () => {
  if (!canIsolate) return;
  temp = makeTempDir('greenlight-disk-full-');
  server = await startCli(['--api-only', '--port', String(await freePort())], {
    cwd: temp.dir,
    via: ['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=${DISK} tmpfs "$0" && cd "$0" && exec "$@"`, temp.dir],
  });
  api = server.url;
});

afterAll(async () => {
  await stopProgram(server);
  temp?.remove();
});

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

async function upload(reviewId: number, content: Buffer): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(content)]), 'filler.bin');
  const response = await fetch(`${api}/reviews/${reviewId}/attachments`, { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

/** `greenlight status` run in the server's namespace, where its data directory is. */
function statusInside(): { code: number | null; stdout: string } {
  const result = spawnSync('nsenter', ['-t', String(server.child.pid), '-U', '-m', '--preserve-credentials', process.execPath, CLI, 'status'], {
    cwd: temp.dir,
    encoding: 'utf8',
    env: { ...process.env, GREENLIGHT_API_PORT: new URL(api).port },
  });
  return { code: result.status, stdout: result.stdout };
}

describe('a full disk', () => {
  const title = `answers writes 507, says so in /health and greenlight status, loses nothing and recovers once space is freed${canIsolate ? '' : ' (skipped: unshare cannot create a mount namespace here)'}`;
  it.skipIf(!canIsolate)(title, async () => {
    const reviewId = (await call(api, 'POST', '/reviews', sampleReview)).body.id;
    const kept: Array<{ id: number; sha256: string }> = [];
    let refused: { status: number; body: any } | undefined;
    for (let n = 0; n < 20 && !refused; n++) {
      const content = Buffer.alloc(FILE_BYTES, n + 1);
      const answer = await upload(reviewId, content);
      if (answer.status === 201) kept.push({ id: answer.body.id, sha256: sha256(content) });
      else refused = answer;
    }
    expect(refused?.status, 'an upload refused for want of space').toBe(507);
    expect(refused?.body.detail).toMatch(/disk is full, so nothing was stored/);

    const health = await call(api, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unhealthy', database: 'ok', storage: expect.stringMatching(/^full: /) });
    const status = statusInside();
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/disk\s+FAIL\s+full: writes have failed for want of space/);

    // A review too large for what is left fails in SQLite rather than in the file system.
    const tooLarge = await call(api, 'POST', '/reviews', { ...sampleReview, metadata: { notes: 'n'.repeat(900_000) } });
    expectProblem(tooLarge, 507, /disk is full/);
    expect(tooLarge.headers.get('retry-after')).toBe('60');

    for (const attachment of kept.splice(0, 4)) expect((await call(api, 'DELETE', `/attachments/${attachment.id}`)).status).toBe(204);
    expect((await upload(reviewId, Buffer.alloc(FILE_BYTES, 99))).status).toBe(201);
    expect((await call(api, 'GET', '/health')).body.storage).toBe('ok');
    for (const attachment of kept) {
      const bytes = Buffer.from(await (await fetch(`${api}/attachments/${attachment.id}/download`)).arrayBuffer());
      expect(sha256(bytes)).toBe(attachment.sha256);
    }
  });
});
