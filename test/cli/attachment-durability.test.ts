import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startCli } from '../support/cli';
import { call, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

const hasStrace = spawnSync('strace', ['-V']).status === 0;

let temp: ReturnType<typeof makeTempDir>;
beforeAll(() => {
  temp = makeTempDir('greenlight-fsync-');
});
afterAll(() => temp?.remove());

/** `greenlight start --api-only` under strace, recording its syncs and renames with the paths of their descriptors. */
async function startTraced(traceFile: string): Promise<{ api: string; stop: () => Promise<void> }> {
  const running = await startCli(['--api-only', '--port', String(await freePort())], {
    cwd: temp.dir,
    via: ['strace', '-f', '-y', '-qq', '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2', '-o', traceFile],
  });
  return {
    api: running.url,
    stop: async () => {
      // strace does not pass signals on; the server says its own process id in the data directory.
      process.kill(Number(fs.readFileSync(path.join(temp.dir, 'greenlight-data', 'greenlight.pid'), 'utf8')), 'SIGTERM');
      await running.exited;
    },
  };
}

describe('an attachment on disk', () => {
  const title = `is synced, file and directory, before the row that names it commits (traced with strace${hasStrace ? '' : ', which is not installed here: apt-get install strace'})`;
  it.skipIf(!hasStrace)(title, async () => {
    const traceFile = path.join(temp.dir, 'trace.txt');
    const server = await startTraced(traceFile);
    let reviewId: number;
    try {
      reviewId = (await call(server.api, 'POST', '/reviews', sampleReview)).body.id;
      const form = new FormData();
      form.append('file', new Blob(['the signed contract']), 'contract.txt');
      expect((await fetch(`${server.api}/reviews/${reviewId}/attachments`, { method: 'POST', body: form })).status).toBe(201);
    } finally {
      await server.stop();
    }
    const lines = fs.readFileSync(traceFile, 'utf8').split('\n');
    const renamed = lines.findIndex((line) => line.includes('rename') && new RegExp(`/attachments/${reviewId}/[0-9a-f-]+"`).test(line));
    expect(renamed, 'the upload moved into place').toBeGreaterThan(-1);
    const incoming = /"([^"]+\.part)"/.exec(lines[renamed])![1];
    const fileSynced = lines.findIndex((line) => /^\d+\s+f(data)?sync\(/.test(line) && line.includes(`<${incoming}>`));
    const directorySynced = lines.findIndex(
      (line, i) => i > renamed && /^\d+\s+fsync\(/.test(line) && line.includes(`/attachments/${reviewId}>)`),
    );
    const rowCommitted = lines.findIndex((line, i) => i > renamed && /^\d+\s+f(data)?sync\(.*greenlight\.db-wal>\)/.test(line));
    const traced = lines.filter((line) => /\.part|attachments|db-wal/.test(line)).join('\n');
    expect(fileSynced, `the file synced; traced:\n${traced}`).toBeGreaterThan(-1);
    expect(fileSynced, 'the file synced before it was moved into place').toBeLessThan(renamed);
    expect(directorySynced, 'its directory synced after the move').toBeGreaterThan(renamed);
    expect(rowCommitted, 'the row committed').toBeGreaterThan(-1);
    expect(directorySynced, 'the directory synced before the row committed').toBeLessThan(rowCommitted);
  });
});
