import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, freePort, startApiProcess, startCli, stopProgram } from '../support/cli';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';
import { subscribe } from '../support/event-stream';
import { call, eventually, sampleReview, startTestServer, type TestServer } from '../support/server';
import { makeTempDir } from '../support/temp';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

async function started(): Promise<TestServer> {
  server = await startTestServer();
  return server;
}

async function pending(url: string, action = sampleReview.proposed_action): Promise<number> {
  return (await call(url, 'GET', `/reviews?q=${encodeURIComponent(action)}`)).body.reviews[0]?.id;
}

/** A review's `waiting_until` as GET /reviews/{id} reads it now, in milliseconds (null when nobody waits). */
async function waitingUntil(url: string, id: number): Promise<number | null> {
  const { body } = await call(url, 'GET', `/reviews/${id}`);
  return body.waiting_until === null ? null : Date.parse(body.waiting_until);
}

describe('waiting_until', () => {
  it('is null on a review nobody waits on, and set while a blocking create waits, on GET /reviews and GET /reviews/{id}', async () => {
    const s = await started();
    const plain = (await call(s.url, 'POST', '/reviews', { ...sampleReview, proposed_action: 'nobody waits' })).body;
    expect(plain.waiting_until).toBeNull();

    const before = Date.now();
    const blocked = call(s.url, 'POST', '/reviews', { ...sampleReview, blocking: true }, { headers: { Prefer: 'wait=120' } });
    await eventually(() => s.test.waitingCount() === 1, 5_000, 'the blocking create to wait');
    const id = await pending(s.url);
    await expect.poll(() => waitingUntil(s.url, id)).not.toBeNull();
    const until = (await waitingUntil(s.url, id))!;
    expect(until).toBeGreaterThanOrEqual(before + 120_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 120_000);

    const list = (await call(s.url, 'GET', '/reviews?status=pending')).body.reviews;
    expect(list.find((review: { id: number }) => review.id === id).waiting_until).toBe(new Date(until).toISOString());
    expect(list.find((review: { id: number }) => review.id === plain.id).waiting_until).toBeNull();

    const decided = await call(s.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve' });
    expect(decided.status).toBe(200);
    expect((await blocked).body).toMatchObject({ id, status: 'approved', waiting_until: null });
    expect(await waitingUntil(s.url, id)).toBeNull();
  });

  it('shows a long-poll of the decision; of two waits the later; and goes back to null when the poller disconnects', async () => {
    const s = await started();
    const review = (await call(s.url, 'POST', '/reviews', sampleReview)).body;
    const short = new AbortController();
    const long = new AbortController();
    const shortPoll = fetch(`${s.url}/reviews/${review.id}/decision?wait=60`, { signal: short.signal }).catch(() => undefined);
    await expect.poll(() => waitingUntil(s.url, review.id)).not.toBeNull();
    const first = (await waitingUntil(s.url, review.id))!;

    const longPoll = fetch(`${s.url}/reviews/${review.id}/decision?wait=300`, { signal: long.signal }).catch(() => undefined);
    await expect.poll(() => waitingUntil(s.url, review.id)).toBeGreaterThanOrEqual(first + 200_000);
    const later = (await waitingUntil(s.url, review.id))!;

    // The earlier wait ending leaves the later one standing.
    short.abort();
    await shortPoll;
    await eventually(() => s.test.waitingCount() === 1, 5_000, 'the short poll to be let go');
    expect(await waitingUntil(s.url, review.id)).toBe(later);

    long.abort();
    await longPoll;
    // Within 2 s of the client going away, nobody is shown waiting.
    await expect.poll(() => waitingUntil(s.url, review.id), { timeout: 2_000 }).toBeNull();
    expect(s.test.waitingCount()).toBe(0);
  });

  it('filters with waiting=true and waiting=false, and sorts by the soonest give-up first', async () => {
    const s = await started();
    const ids: number[] = [];
    for (const action of ['idle one', 'waited on for long', 'idle two', 'waited on briefly']) {
      ids.push((await call(s.url, 'POST', '/reviews', { ...sampleReview, proposed_action: action })).body.id);
    }
    const [idle1, waitedLong, idle2, waitedBriefly] = ids;
    const polls = new AbortController();
    const held = [
      fetch(`${s.url}/reviews/${waitedLong}/decision?wait=250`, { signal: polls.signal }).catch(() => undefined),
      fetch(`${s.url}/reviews/${waitedBriefly}/decision?wait=100`, { signal: polls.signal }).catch(() => undefined),
    ];
    try {
      await expect.poll(async () => (await call(s.url, 'GET', '/reviews?waiting=true')).body.total).toBe(2);
      const waiting = (await call(s.url, 'GET', '/reviews?waiting=true&sort=waiting_until')).body;
      expect(waiting.reviews.map((review: { id: number }) => review.id)).toEqual([waitedBriefly, waitedLong]);
      const idle = (await call(s.url, 'GET', '/reviews?waiting=false&sort=oldest')).body;
      expect(idle.reviews.map((review: { id: number }) => review.id)).toEqual([idle1, idle2]);
      const all = (await call(s.url, 'GET', '/reviews?sort=waiting_until')).body;
      expect(all.reviews.map((review: { id: number }) => review.id)).toEqual([waitedBriefly, waitedLong, idle1, idle2]);

      await call(s.url, 'POST', `/reviews/${waitedBriefly}/decide`, { decision_type: 'reject' });
      expect((await call(s.url, 'GET', '/reviews?waiting=true')).body.reviews.map((review: { id: number }) => review.id)).toEqual([waitedLong]);
    } finally {
      polls.abort();
      await Promise.all(held);
    }
    expect((await call(s.url, 'GET', '/reviews?waiting=maybe')).status).toBe(400);
    expect((await call(s.url, 'GET', '/reviews?sort=waiting')).status).toBe(400);
  });

  it('tells live streams with review.waiting when it moves, and not after the decision', async () => {
    const s = await started();
    const stream = await subscribe(s.url);
    try {
      const review = (await call(s.url, 'POST', '/reviews', sampleReview)).body;
      const poll = call(s.url, 'GET', `/reviews/${review.id}/decision?wait=60`);
      await expect.poll(() => stream.events.filter((event) => event.event === 'review.waiting').length).toBe(1);
      const started = stream.events.find((event) => event.event === 'review.waiting')!;
      expect(started.data).toMatchObject({ id: review.id, status: 'pending', waiting_until: expect.any(String) });

      await call(s.url, 'POST', `/reviews/${review.id}/decide`, { decision_type: 'approve' });
      await poll;
      await expect.poll(() => stream.events.some((event) => event.event === 'review.decided')).toBe(true);
      expect(stream.events.find((event) => event.event === 'review.decided')!.data.waiting_until).toBeNull();
      await eventually(() => s.test.waitingCount() === 0, 5_000, 'the poll to be answered');
      expect(stream.events.filter((event) => event.event === 'review.waiting')).toHaveLength(1);
    } finally {
      stream.close();
      await stream.done;
    }
  });
});

/** Several API processes share one PostgreSQL database: only the `postgres` project runs this. */
const onPostgres = TEST_DATABASE_URL !== undefined;
const why = onPostgres ? '' : ' (PostgreSQL only: skipped on SQLite)';

describe('waiting_until across API processes', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let database: TestDatabase;

  beforeAll(async () => {
    if (!onPostgres) return;
    temp = makeTempDir('greenlight-waiting-until-');
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    temp?.remove();
  });

  const apiProcess = (name: string): Promise<RunningCli> => startApiProcess(temp.dir, name, database.url);

  it.skipIf(!onPostgres)(`reads on one process the agent waiting on another, live on its stream too, and null once it goes${why}`, { timeout: 60_000 }, async () => {
    const [a, b] = [await apiProcess('a'), await apiProcess('b')];
    const stream = await subscribe(b.url);
    try {
      const review = (await call(a.url, 'POST', '/reviews', sampleReview)).body;
      const agent = new AbortController();
      const poll = fetch(`${a.url}/reviews/${review.id}/decision?wait=90`, { signal: agent.signal }).catch(() => undefined);
      await expect.poll(() => waitingUntil(b.url, review.id)).not.toBeNull();
      expect((await call(b.url, 'GET', '/reviews?waiting=true')).body.reviews.map((r: { id: number }) => r.id)).toEqual([review.id]);
      await expect.poll(() => stream.events.some((event) => event.event === 'review.waiting' && event.data.waiting_until !== null)).toBe(true);

      agent.abort();
      await poll;
      await expect.poll(() => waitingUntil(b.url, review.id), { timeout: 2_000 }).toBeNull();
      await expect.poll(() => stream.events.some((event) => event.event === 'review.waiting' && event.data.waiting_until === null)).toBe(true);
    } finally {
      stream.close();
      await stream.done;
      await Promise.all([stopProgram(a), stopProgram(b)]);
    }
  });
});

describe('waiting_until after a process is killed with -9', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeAll(() => {
    temp = makeTempDir('greenlight-waiting-killed-');
  });
  afterAll(() => temp?.remove());

  /** `greenlight start --api-only` on the database of `dir` (its SQLite file, or its PostgreSQL database). */
  async function apiIn(dir: string): Promise<RunningCli> {
    return startCli(['--api-only', '--port', String(await freePort())], { cwd: dir });
  }

  /** A review, and a long-poll of its decision on `api` that the kill will cut. */
  async function waitedOn(api: RunningCli, seconds: number): Promise<number> {
    const review = (await call(api.url, 'POST', '/reviews', sampleReview)).body;
    void fetch(`${api.url}/reviews/${review.id}/decision?wait=${seconds}`).catch(() => undefined);
    await expect.poll(() => waitingUntil(api.url, review.id)).not.toBeNull();
    return review.id;
  }

  async function killed(api: RunningCli): Promise<void> {
    api.child.kill('SIGKILL');
    await api.exited;
  }

  it.skipIf(onPostgres)('on SQLite, which one process serves, shows nobody waiting once the API starts again', { timeout: 60_000 }, async () => {
    const dir = path.join(temp.dir, 'sqlite');
    fs.mkdirSync(dir);
    const first = await apiIn(dir);
    const id = await waitedOn(first, 250);
    await killed(first);
    const again = await apiIn(dir);
    try {
      expect(await waitingUntil(again.url, id)).toBeNull();
      expect((await call(again.url, 'GET', '/reviews?waiting=true')).body.total).toBe(0);
    } finally {
      await stopProgram(again);
    }
  });

  it.skipIf(!onPostgres)(`on PostgreSQL, stops showing the dead process's wait at its own until, while another process serves${why}`, { timeout: 60_000 }, async () => {
    const dir = path.join(temp.dir, 'postgres');
    fs.mkdirSync(dir);
    const [doomed, survivor] = [await apiIn(dir), await apiIn(dir)];
    try {
      const id = await waitedOn(doomed, 6);
      const until = (await waitingUntil(survivor.url, id))!;
      await killed(doomed);
      // No process removes the row; it stops counting once its time has passed. On a busy
      // machine that time may have come by the time the survivor answers: then null is right.
      const shown = await waitingUntil(survivor.url, id);
      expect(shown === until || (shown === null && Date.now() >= until), `waiting_until ${shown} against ${until} at ${Date.now()}`).toBe(true);
      await expect.poll(() => waitingUntil(survivor.url, id), { timeout: 20_000 }).toBeNull();
      expect((await call(survivor.url, 'GET', '/reviews?waiting=true')).body.total).toBe(0);
    } finally {
      await Promise.all([stopProgram(doomed), stopProgram(survivor)]);
    }
  });
});
