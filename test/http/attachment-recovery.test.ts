import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { attach } from '../support/seed';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call, sampleReview, startTestServer, type TestServer } from '../support/server';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

it('removes at start-up the files of uploads whose transaction never committed, and keeps every attachment', async () => {
  const first = (server = await startTestServer());
  const review = (await call(first.url, 'POST', '/reviews', sampleReview)).body;
  const attachment = await attach(first.url, review.id, 'kept bytes', 'kept.txt', 'text/plain');
  await first.close();

  // What a kill between moving an upload into place and its COMMIT leaves behind, some time ago
  // (on PostgreSQL the files of the last minutes are spared: another process may be writing them).
  const reviewDir = path.join(first.dataDir, 'attachments', String(review.id));
  const orphans = [path.join(reviewDir, 'never-committed'), path.join(first.dataDir, 'attachments', '999', 'never-committed-either')];
  fs.mkdirSync(path.join(first.dataDir, 'attachments', '999'));
  for (const orphan of orphans) {
    fs.writeFileSync(orphan, 'orphan');
    fs.utimesSync(orphan, new Date(Date.now() - 11 * 60_000), new Date(Date.now() - 11 * 60_000));
  }

  const restarted = (server = await startTestServer({ data_dir: first.dataDir, database_url: first.config.database_url }));
  expect(fs.readdirSync(reviewDir)).toHaveLength(1);
  expect(fs.readdirSync(path.join(first.dataDir, 'attachments', '999'))).toEqual([]);
  const content = await fetch(`${restarted.url}/attachments/${attachment.id}/download`);
  expect(await content.text()).toBe('kept bytes');
});

it.runIf(TEST_DATABASE_URL)('spares, on a database other processes share, the files of uploads of the last minutes', async () => {
  const first = (server = await startTestServer());
  const review = (await call(first.url, 'POST', '/reviews', sampleReview)).body;
  await attach(first.url, review.id, 'kept bytes', 'kept.txt', 'text/plain');
  await first.close();
  // Just moved into place by another process, whose commit is a moment away.
  const reviewDir = path.join(first.dataDir, 'attachments', String(review.id));
  fs.writeFileSync(path.join(reviewDir, 'committing-elsewhere'), 'bytes');

  server = await startTestServer({ data_dir: first.dataDir, database_url: first.config.database_url });
  expect(fs.readdirSync(reviewDir)).toHaveLength(2);
});
