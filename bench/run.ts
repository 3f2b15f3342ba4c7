/**
 * `npm run bench`: Greenlight's performance targets, measured against the real server started
 * as a user starts it, printed as a table and written to bench/results.json.
 * `--quick` runs a small version of every measurement (CI prints it, nobody judges it);
 * `--out <file>` writes the results elsewhere; `--only <section>[,<section>]` runs some of
 * delivery, waiters, throughput, reads, dashboard, pg-delivery, pg-throughput, pg-hosted, pg-reads, webhooks, evals, pg-evals (while
 * working on one of them). The pg- sections need PostgreSQL (GREENLIGHT_BENCH_POSTGRES_URL, by
 * default postgres://postgres@127.0.0.1:5432/test) and record why they were skipped without it.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { chromiumAvailable } from './chromium';
import { firstQueueRenderMs, initialBundleBytes } from './dashboard';
import { type Answer, inParallel, median, percentile, request, reviewBody, timed } from './http';
import { GOVERNED_EVERY, hostedBodies, organizationAgentKey } from './hosted-rules';
import { type BenchProcess, cpuSeconds, type GreenlightOptions, residentBytes, startBaseline, startGreenlight } from './processes';
import { postgresUnavailable, withBenchDatabase } from './postgres';
import { type CreateLoad, createLoad, type LoadOptions } from './load';
import { seedReviews } from './seed';

interface Scale {
  latencyWaiters: number;
  concurrentWaiters: number;
  idleSeconds: number;
  /** How long a freshly started server is left alone before its memory at rest is read. */
  restSeconds: number;
  throughputSeconds: number;
  throughputRounds: number;
  /**
   * Rounds of the hosted section, each server in turn: its ratio compares two servers that
   * share the machine with PostgreSQL, and three rounds let one slow stretch of it decide.
   */
  hostedRounds: number;
  /**
   * Rounds of the PostgreSQL throughput section: its two CPU targets share the one-process
   * server's figure, and with three rounds one slow round of that server moved both, in
   * opposite directions (docs/performance.md, the fourteenth round).
   */
  postgresThroughputRounds: number;
  seededReviews: number;
  readSamples: number;
  queueReviews: number;
  dashboardVisits: number;
  /** Reviews seeded for an evaluation run, one in ten pending: the rest are the decided reviews it reads. */
  evaluatedReviews: number;
}

const FULL: Scale = {
  latencyWaiters: 1_000,
  concurrentWaiters: 10_000,
  idleSeconds: 5,
  restSeconds: 20,
  throughputSeconds: 10,
  throughputRounds: 3,
  hostedRounds: 5,
  postgresThroughputRounds: 5,
  seededReviews: 1_000_000,
  readSamples: 300,
  queueReviews: 5_000,
  dashboardVisits: 5,
  // 1,000,000 decided and 111,112 pending.
  evaluatedReviews: 1_111_112,
};

const QUICK: Scale = {
  latencyWaiters: 100,
  concurrentWaiters: 500,
  idleSeconds: 1,
  restSeconds: 2,
  // Each server is warmed before its round: a second of creates still measures something.
  throughputSeconds: 1,
  throughputRounds: 1,
  hostedRounds: 1,
  postgresThroughputRounds: 1,
  seededReviews: 20_000,
  readSamples: 30,
  queueReviews: 5_000,
  dashboardVisits: 1,
  evaluatedReviews: 22_222,
};

/** One printed figure. `better` says which way the target points. */
interface Figure {
  section: string;
  figure: string;
  value: number | null;
  unit: string;
  target: number | null;
  better: 'lower' | 'higher' | null;
  note?: string;
}

const figures: Figure[] = [];

function record(figure: Figure): void {
  figures.push(figure);
  const shown = figure.value === null ? 'n/a' : `${round(figure.value)} ${figure.unit}`;
  console.log(`  ${figure.figure}: ${shown}${figure.note ? ` (${figure.note})` : ''}`);
}

function round(value: number): number {
  return Math.abs(value) >= 100 ? Math.round(value) : Math.round(value * 100) / 100;
}

/** value / target, oriented so that ≤ 1 meets a "lower" target and ≥ 1 meets a "higher" one. */
function ratioOf(figure: Figure): number | null {
  if (figure.value === null || figure.target === null) return null;
  return figure.value / figure.target;
}

function meets(figure: Figure): boolean | null {
  const ratio = ratioOf(figure);
  if (ratio === null || figure.better === null) return null;
  return figure.better === 'lower' ? ratio <= 1 : ratio >= 1;
}

function tempDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `greenlight-bench-${name}-`));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function pendingCount(url: string): Promise<number> {
  const answer = await request(`${url}/stats`, 'GET');
  return answer.body.pending_reviews as number;
}

/** Ids of every pending review, keyed by the agent number written in its proposed action. */
async function pendingByAgent(url: string, expected: number): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  for (let page = 1; ids.size < expected; page += 1) {
    const answer = await request(`${url}/reviews?status=pending&page_size=100&sort=oldest&page=${page}`, 'GET');
    if (answer.body.reviews.length === 0) break;
    for (const review of answer.body.reviews) ids.set(Number(/#(\d+)/.exec(review.proposed_action)?.[1]), review.id);
  }
  if (ids.size !== expected) throw new Error(`expected ${expected} pending reviews, found ${ids.size}`);
  return ids;
}

/**
 * Opens `count` blocking creates, each on its own connection, spread over `urls` (servers
 * sharing one database), and resolves once every review is stored (the servers then hold them
 * all). Opened in batches so the listen backlog is never what limits the figure.
 */
async function holdBlockingCreates(urls: string[], count: number): Promise<Array<Promise<Answer>>> {
  const answers: Array<Promise<Answer>> = [];
  const batch = 250;
  for (let n = 0; n < count; n += batch) {
    for (let k = n; k < Math.min(count, n + batch); k += 1) {
      answers.push(request(`${urls[k % urls.length]}/reviews`, 'POST', { ...reviewBody(k), blocking: true }, { ownConnection: true }));
    }
    const stored = Math.min(count, n + batch);
    const deadline = Date.now() + 120_000;
    while ((await pendingCount(urls[0])) < stored) {
      if (Date.now() > deadline) throw new Error(`only ${await pendingCount(urls[0])} of ${stored} blocking creates were stored within 120 s`);
      await sleep(20);
    }
  }
  return answers;
}

function decisionFor(n: number): { decision_type: string; modified_action?: string } {
  const type = ['approve', 'reject', 'modify'][n % 3];
  return type === 'modify' ? { decision_type: type, modified_action: `Refund half of order #${n} instead.` } : { decision_type: type };
}

function answeredCorrectly(answer: Answer, reviewId: number, n: number): boolean {
  const expected = decisionFor(n);
  const decision = answer.body?.decision;
  return (
    answer.status === 201 &&
    answer.body.id === reviewId &&
    decision?.decision_type === expected.decision_type &&
    (decision.modified_action ?? undefined) === expected.modified_action
  );
}

/**
 * `count` agents blocked on POST /reviews, spread over `servers`; each review is decided through
 * the next server of the list (the same one when there is only one), one decision at a time.
 */
async function measureDelivery(section: string, servers: BenchProcess[], count: number, targetMs: number): Promise<void> {
  const urls = servers.map((server) => server.url);
  const answers = await holdBlockingCreates(urls, count);
  const ids = await pendingByAgent(urls[0], count);
  const delivery: number[] = [];
  const roundTrip: number[] = [];
  let correct = 0;
  for (let n = 0; n < count; n += 1) {
    const reviewId = ids.get(n) as number;
    const sent = performance.now();
    const decided = await request(`${urls[(n + 1) % urls.length]}/reviews/${reviewId}/decide`, 'POST', decisionFor(n));
    if (decided.status !== 200) throw new Error(`decide answered ${decided.status}`);
    const agent = await answers[n];
    // The agent's answer may even arrive before the decider's: zero, not a negative latency.
    delivery.push(Math.max(0, agent.at - decided.at));
    roundTrip.push(decided.at - sent);
    if (answeredCorrectly(agent, reviewId, n)) correct += 1;
  }
  record({ section, figure: 'decide response → agent answered, p50', value: percentile(delivery, 50), unit: 'ms', target: null, better: null });
  record({ section, figure: 'decide response → agent answered, p99', value: percentile(delivery, 99), unit: 'ms', target: targetMs, better: 'lower' });
  record({ section, figure: 'decide call round trip, p50', value: percentile(roundTrip, 50), unit: 'ms', target: null, better: null });
  record({ section, figure: 'agents answered with their decision', value: correct, unit: 'agents', target: count, better: 'higher' });
}

async function decisionDelivery(scale: Scale): Promise<void> {
  console.log(`\n1. Decision delivery: ${scale.latencyWaiters} agents blocked on POST /reviews, decided one by one`);
  const dir = tempDir('latency');
  const server = await startGreenlight(dir);
  try {
    await measureDelivery('Decision delivery', [server], scale.latencyWaiters, 10);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** How long a process must use under `QUIET_SHARE` of a core to count as settled, and how long to wait for that at most. */
const QUIET_WINDOW_MS = 1_000;
const QUIET_SHARE = 0.03;
const QUIET_WITHIN_MS = 30_000;

/** Resolves once `pid` has used under 3 % of a core over a second (or after 30 s, saying so): CPU time is counted in 10 ms ticks. */
async function untilQuiet(pid: number): Promise<void> {
  const gaveUpAt = performance.now() + QUIET_WITHIN_MS;
  while (performance.now() < gaveUpAt) {
    const before = cpuSeconds(pid);
    await sleep(QUIET_WINDOW_MS);
    if ((cpuSeconds(pid) - before) / (QUIET_WINDOW_MS / 1000) < QUIET_SHARE) return;
  }
  console.log(`  (the server was still busy ${QUIET_WITHIN_MS / 1000} s after the last waiter was stored)`);
}

async function concurrentWaiters(scale: Scale): Promise<void> {
  console.log(`\n2. Concurrent waiters: ${scale.concurrentWaiters} blocking creates held open at once`);
  const dir = tempDir('waiters');
  const server = await startGreenlight(dir);
  try {
    const startedRss = residentBytes(server.pid);
    // A desktop app idles in the tray for hours: what counts is its memory once V8 has had the
    // quiet moment it waits for before giving back what start-up used.
    await sleep(scale.restSeconds * 1000);
    const restRss = residentBytes(server.pid);
    const answers = await holdBlockingCreates([server.url], scale.concurrentWaiters);
    // What storing the last of them set going (the collections their garbage calls for) is
    // finished before the idle figure starts: it measures holding them, not taking them in.
    await untilQuiet(server.pid);
    const cpuBefore = cpuSeconds(server.pid);
    await sleep(scale.idleSeconds * 1000);
    const cpuShare = (cpuSeconds(server.pid) - cpuBefore) / scale.idleSeconds;
    const heldRss = residentBytes(server.pid);
    const ids = await pendingByAgent(server.url, scale.concurrentWaiters);
    let correct = 0;
    const started = performance.now();
    await inParallel([...ids.keys()], 8, async (n) => {
      const reviewId = ids.get(n) as number;
      const decided = await request(`${server.url}/reviews/${reviewId}/decide`, 'POST', decisionFor(n));
      if (decided.status !== 200) throw new Error(`decide answered ${decided.status}`);
      if (answeredCorrectly(await answers[n], reviewId, n)) correct += 1;
    });
    const decideSeconds = (performance.now() - started) / 1000;
    const section = 'Concurrent waiters';
    record({ section, figure: 'server RSS just started', value: startedRss / 2 ** 20, unit: 'MB', target: null, better: null });
    record({ section, figure: 'server RSS at rest', value: restRss / 2 ** 20, unit: 'MB', target: 70, better: 'lower', note: `after ${scale.restSeconds} s idle` });
    record({ section, figure: `server RSS holding ${scale.concurrentWaiters} waiters`, value: heldRss / 2 ** 20, unit: 'MB', target: 150, better: 'lower' });
    const bareRss = await heldByBareExpress(scale);
    record({
      section,
      figure: `bare Express + sqlite3 holding the same ${scale.concurrentWaiters} requests`,
      value: bareRss / 2 ** 20,
      unit: 'MB',
      target: null,
      better: null,
      note: 'the least an Express server holding them needs',
    });
    record({ section, figure: 'Greenlight / bare, holding them', value: heldRss / bareRss, unit: '×', target: null, better: null });
    record({
      section,
      figure: 'server CPU while they wait',
      value: cpuShare * 100,
      unit: '% of a core',
      target: 1,
      better: 'lower',
      note: `over ${scale.idleSeconds} s`,
    });
    record({ section, figure: 'agents answered with their decision', value: correct, unit: 'agents', target: scale.concurrentWaiters, better: 'higher' });
    record({ section, figure: 'decisions delivered per second (8 deciders)', value: scale.concurrentWaiters / decideSeconds, unit: 'per s', target: null, better: null });
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The floor under the waiters' figure: `bench/baseline-server.ts` holding the same blocking
 * creates, read at the same moment after they arrive; then it answers them all.
 */
async function heldByBareExpress(scale: Scale): Promise<number> {
  const dir = tempDir('waiters-bare');
  try {
    await migrate(dir);
    const baseline = await startBaseline(path.join(dir, 'greenlight.db'));
    try {
      const answers = await holdBlockingCreates([baseline.url], scale.concurrentWaiters);
      await sleep(1_000 + scale.idleSeconds * 1000);
      const rss = residentBytes(baseline.pid);
      await request(`${baseline.url}/release`, 'POST');
      const answered = (await Promise.all(answers)).filter((answer) => answer.status === 201).length;
      if (answered !== scale.concurrentWaiters) throw new Error(`the bare server answered ${answered} of ${scale.concurrentWaiters} held creates`);
      return rss;
    } finally {
      await baseline.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function recordLoads(section: string, figure: string, loads: CreateLoad[]): CreateLoad {
  const perSecond = median(loads.map((load) => load.perSecond));
  const cpuMsPerCreate = median(loads.map((load) => load.cpuMsPerCreate));
  const databaseCpuMsPerCreate = median(loads.map((load) => load.databaseCpuMsPerCreate));
  record({ section, figure, value: perSecond, unit: 'req/s', target: null, better: null, note: `median of ${loads.map((load) => Math.round(load.perSecond)).join(', ')}` });
  record({ section, figure: `${figure}: CPU per create`, value: cpuMsPerCreate, unit: 'ms', target: null, better: null });
  if (databaseCpuMsPerCreate > 0) record({ section, figure: `${figure}: database CPU per create`, value: databaseCpuMsPerCreate, unit: 'ms', target: null, better: null });
  return { perSecond, cpuMsPerCreate, databaseCpuMsPerCreate };
}

async function createThroughput(scale: Scale): Promise<void> {
  console.log(`\n3. Create throughput: POST /reviews for ${scale.throughputSeconds} s, 10 connections, ${scale.throughputRounds} round(s) each, alternating`);
  const greenlightLoads: CreateLoad[] = [];
  const baselineLoads: CreateLoad[] = [];
  for (let round = 0; round < scale.throughputRounds; round += 1) {
    const dir = tempDir('throughput');
    try {
      const greenlight = await startGreenlight(dir);
      try {
        greenlightLoads.push(await createLoad([greenlight], scale.throughputSeconds));
      } finally {
        await greenlight.stop();
      }
      // The same kind of file: Greenlight's schema, freshly migrated, in the same directory.
      const baselineDir = tempDir('baseline');
      await migrate(baselineDir);
      const baseline = await startBaseline(path.join(baselineDir, 'greenlight.db'));
      try {
        baselineLoads.push(await createLoad([baseline], scale.throughputSeconds));
      } finally {
        await baseline.stop();
        fs.rmSync(baselineDir, { recursive: true, force: true });
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const section = 'Create throughput';
  const greenlight = recordLoads(section, 'Greenlight POST /reviews', greenlightLoads);
  const baseline = recordLoads(section, 'bare Express + sqlite3 insert', baselineLoads);
  record({ section, figure: 'Greenlight / bare', value: greenlight.perSecond / baseline.perSecond, unit: '×', target: 1, better: 'higher' });
}

/** GET latencies of the reads a reviewer and an agent make, against a server holding `seeded` reviews. */
async function measureReads(section: string, url: string, seeded: number, samplesPerRead: number): Promise<void> {
  const pending = await pendingCount(url);
  const pages = Math.max(1, Math.floor(pending / 20));
  const randomPage = (): number => 1 + Math.floor(Math.random() * pages);
  const randomId = (): number => 1 + Math.floor(Math.random() * seeded);
  const reads: Array<[string, () => string]> = [
    ['GET /stats', () => '/stats'],
    ['GET /reviews?status=pending&page=<random>', () => `/reviews?status=pending&page=${randomPage()}`],
    ['GET /reviews?status=pending&sort=priority&page_size=100 (the queue)', () => '/reviews?status=pending&sort=priority&page_size=100'],
    ['GET /reviews (newest first)', () => '/reviews'],
    ['GET /reviews/<random id>', () => `/reviews/${randomId()}`],
  ];
  for (const [name, pathOf] of reads) {
    for (let warm = 0; warm < 3; warm += 1) await timed(`${url}${pathOf()}`);
    const samples: number[] = [];
    for (let i = 0; i < samplesPerRead; i += 1) samples.push(await timed(`${url}${pathOf()}`));
    record({ section, figure: `${name}, p50`, value: percentile(samples, 50), unit: 'ms', target: null, better: null });
    record({ section, figure: `${name}, p99`, value: percentile(samples, 99), unit: 'ms', target: 50, better: 'lower' });
  }
}

/** Starts Greenlight once on an empty database, so that its migrations create the schema, and stops it. */
async function migrate(dir: string, options: GreenlightOptions = {}): Promise<void> {
  const migrated = await startGreenlight(dir, options);
  await migrated.stop();
}

async function readsAtScale(scale: Scale): Promise<void> {
  console.log(`\n4. Reads at scale: ${scale.seededReviews.toLocaleString('en')} reviews stored`);
  const dir = tempDir('reads');
  try {
    await migrate(dir);
    const seedStarted = performance.now();
    await seedReviews(path.join(dir, 'greenlight.db'), { count: scale.seededReviews, pendingEvery: 10, now: Date.now() });
    console.log(`  (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`);
    const server = await startGreenlight(dir);
    try {
      await measureReads('Reads at scale', server.url, scale.seededReviews, scale.readSamples);
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function dashboard(scale: Scale): Promise<void> {
  console.log(`\n5. Dashboard: initial bundle and first render of a ${scale.queueReviews.toLocaleString('en')}-review queue`);
  const section = 'Dashboard';
  record({ section, figure: 'initial bundle (gzip)', value: initialBundleBytes() / 1024, unit: 'KB', target: 300, better: 'lower' });
  if (!chromiumAvailable()) {
    record({ section, figure: 'first render of the queue', value: null, unit: 'ms', target: 1000, better: 'lower', note: 'skipped: no Chromium at /usr/bin/chromium' });
    return;
  }
  const dir = tempDir('dashboard');
  try {
    await migrate(dir);
    await seedReviews(path.join(dir, 'greenlight.db'), { count: scale.queueReviews, pendingEvery: 1, now: Date.now() });
    const server = await startGreenlight(dir, { dashboard: true });
    try {
      const ms = await firstQueueRenderMs(server.dashboardUrl as string, scale.dashboardVisits);
      record({ section, figure: 'first render of the queue (navigation → first entry)', value: ms, unit: 'ms', target: 1000, better: 'lower', note: `median of ${scale.dashboardVisits} cold visit(s)` });
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Where there is no PostgreSQL, records why under `section`, and says so. */
async function skippedWithoutPostgres(section: string): Promise<boolean> {
  const unavailable = await postgresUnavailable();
  if (unavailable) record({ section, figure: 'PostgreSQL', value: null, unit: '', target: null, better: null, note: `skipped: ${unavailable}` });
  return unavailable !== null;
}

/**
 * `processes` Greenlight API processes on one new PostgreSQL database, each in a data directory
 * of its own as on separate machines; `prepare` runs on the database before they start.
 * Where there is no PostgreSQL, records why under `section` instead.
 */
async function onPostgres(
  section: string,
  processes: number,
  work: (servers: BenchProcess[]) => Promise<void>,
  prepare: (databaseUrl: string) => Promise<void> = async () => {},
  settings?: NodeJS.ProcessEnv,
): Promise<void> {
  if (await skippedWithoutPostgres(section)) return;
  await withBenchDatabase(async (databaseUrl) => {
    const dirs: string[] = [];
    const servers: BenchProcess[] = [];
    try {
      await prepare(databaseUrl);
      for (let i = 0; i < processes; i += 1) {
        dirs.push(tempDir('postgres'));
        servers.push(await startGreenlight(dirs[i], { databaseUrl, settings }));
      }
      await work(servers);
    } finally {
      for (const server of servers) await server.stop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function postgresDelivery(scale: Scale): Promise<void> {
  console.log(`\n6. PostgreSQL decision delivery: ${scale.latencyWaiters} agents blocked across two API processes, each decided through the other`);
  await onPostgres('PostgreSQL delivery (2 processes)', 2, (servers) => measureDelivery('PostgreSQL delivery (2 processes)', servers, scale.latencyWaiters, 20));
}

/**
 * The floor on PostgreSQL: `bench/baseline-postgres-server.ts` on a database with Greenlight's
 * schema, less the statistics trigger; run as `processes` servers sharing the connections, it
 * tells what a further process costs on this machine whatever it runs.
 */
async function postgresFloorLoad(seconds: number, connections: number, processes = 1): Promise<CreateLoad> {
  return withBenchDatabase(async (databaseUrl) => {
    const dir = tempDir('postgres-floor');
    const floors: BenchProcess[] = [];
    try {
      await migrate(dir, { databaseUrl });
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query('DROP TRIGGER reviews_tally ON reviews').finally(() => client.end());
      for (let i = 0; i < processes; i += 1) floors.push(await startBaseline(databaseUrl, 'baseline-postgres-server'));
      return await createLoad(floors, seconds, { connections, postgres: true });
    } finally {
      for (const floor of floors) await floor.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function postgresThroughput(scale: Scale): Promise<void> {
  const connections = 32;
  console.log(
    `\n7. PostgreSQL create throughput: one, two and four API processes and the floor (bare Express + pg) as one and two processes, ${connections} connections in all, ${scale.postgresThroughputRounds} round(s) each, alternating`,
  );
  const section = 'PostgreSQL create throughput';
  const loads = new Map<number, CreateLoad[]>([
    [1, []],
    [2, []],
    [4, []],
  ]);
  const floorLoads = new Map<number, CreateLoad[]>([
    [1, []],
    [2, []],
  ]);
  for (let round = 0; round < scale.postgresThroughputRounds; round += 1) {
    for (const [processes, measured] of loads) {
      await onPostgres(section, processes, async (servers) => void measured.push(await createLoad(servers, scale.throughputSeconds, { connections, postgres: true })));
      const floorMeasured = floorLoads.get(processes);
      if (floorMeasured && !(await postgresUnavailable())) floorMeasured.push(await postgresFloorLoad(scale.throughputSeconds, connections, processes));
    }
  }
  if (loads.get(1)!.length === 0) return;
  const one = recordLoads(section, 'POST /reviews, 1 API process', loads.get(1)!);
  const two = recordLoads(section, 'POST /reviews, 2 API processes', loads.get(2)!);
  const four = recordLoads(section, 'POST /reviews, 4 API processes', loads.get(4)!);
  const floor = recordLoads(section, 'floor: bare Express + pg, review + outbox row', floorLoads.get(1)!);
  const floorTwo = recordLoads(section, 'floor, 2 processes', floorLoads.get(2)!);
  const cores = `on ${os.cpus().length} cores shared with PostgreSQL and the load generator`;
  record({ section, figure: '1 process / floor, throughput', value: one.perSecond / floor.perSecond, unit: '×', target: 0.8, better: 'higher', note: cores });
  record({ section, figure: '2 processes / floor, throughput', value: two.perSecond / floor.perSecond, unit: '×', target: null, better: null, note: cores });
  record({ section, figure: '1 process / floor, CPU per create', value: one.cpuMsPerCreate / floor.cpuMsPerCreate, unit: '×', target: 1.3, better: 'lower' });
  record({ section, figure: '2 processes / 1 process, CPU per create', value: two.cpuMsPerCreate / one.cpuMsPerCreate, unit: '×', target: 1.15, better: 'lower' });
  // The same step taken by the floor: what a second process costs here when it does nothing but insert.
  record({ section, figure: 'floor, 2 processes / 1 process, CPU per create', value: floorTwo.cpuMsPerCreate / floor.cpuMsPerCreate, unit: '×', target: null, better: null, note: cores });
  // What each further process costs: with few cores, more processes than cores only add their relaying.
  record({ section, figure: '4 processes / 1 process, CPU per create', value: four.cpuMsPerCreate / one.cpuMsPerCreate, unit: '×', target: null, better: null, note: cores });
  record({ section, figure: '1 process / floor, database CPU per create', value: one.databaseCpuMsPerCreate / floor.databaseCpuMsPerCreate, unit: '×', target: null, better: null });
  record({ section, figure: '2 processes / 1 process, database CPU per create', value: two.databaseCpuMsPerCreate / one.databaseCpuMsPerCreate, unit: '×', target: null, better: null });
  record({ section, figure: '4 processes / 1 process, database CPU per create', value: four.databaseCpuMsPerCreate / one.databaseCpuMsPerCreate, unit: '×', target: null, better: null });
}

/** Greenlight started on `databaseUrl` with `settings` for the length of `work`, in a data directory of its own. */
async function whileRunning<T>(databaseUrl: string, settings: NodeJS.ProcessEnv, work: (server: BenchProcess) => Promise<T>): Promise<T> {
  const dir = tempDir('postgres');
  try {
    const server = await startGreenlight(dir, { databaseUrl, settings });
    try {
      return await work(server);
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The hosted create path: an organization's agent key filing reviews that 50 routing rules and
 * 10 workflows are tried on, against self-hosted creates (no organization, no rules) on the
 * same database with the same connections and duration, the servers taking turns; and, between
 * them, an organization's agent filing the same reviews with no rules or workflows, which tells
 * what the rules cost from what the rest of the hosted path does.
 */
async function postgresHostedCreates(scale: Scale): Promise<void> {
  const connections = 32;
  console.log(
    `\n8. PostgreSQL hosted creates: an organization with 50 routing rules and 10 workflows (one governing 1 review in ${GOVERNED_EVERY}) against self-hosted creates, one database, ${connections} connections, ${scale.hostedRounds} round(s) each, alternating, each round starting with the next`,
  );
  const section = 'PostgreSQL hosted creates';
  if (await skippedWithoutPostgres(section)) return;
  const bodies = hostedBodies();
  const hostedLoads: CreateLoad[] = [];
  const bareLoads: CreateLoad[] = [];
  const selfHostedLoads: CreateLoad[] = [];
  await withBenchDatabase(async (databaseUrl) => {
    const [withRules, withoutRules] = await whileRunning(databaseUrl, HOSTED, async (server) => [
      await organizationAgentKey(server.url, HOSTED_OPERATOR_KEY, { withRules: true }),
      await organizationAgentKey(server.url, HOSTED_OPERATOR_KEY, { withRules: false }),
    ]);
    const by = (key: string): LoadOptions => ({ connections, postgres: true, bodies, headers: { authorization: `Bearer ${key}` } });
    const turns: Array<() => Promise<void>> = [
      async () => void hostedLoads.push(await whileRunning(databaseUrl, HOSTED, (server) => createLoad([server], scale.throughputSeconds, by(withRules)))),
      async () => void bareLoads.push(await whileRunning(databaseUrl, HOSTED, (server) => createLoad([server], scale.throughputSeconds, by(withoutRules)))),
      async () => void selfHostedLoads.push(await whileRunning(databaseUrl, {}, (server) => createLoad([server], scale.throughputSeconds, { connections, postgres: true, bodies }))),
    ];
    // Each round starts with the next server, so none is always the one measured after the others (on a larger database, a warmer cache).
    for (let round = 0; round < scale.hostedRounds; round += 1) {
      for (let turn = 0; turn < turns.length; turn += 1) await turns[(round + turn) % turns.length]();
    }
  });
  const hosted = recordLoads(section, 'POST /reviews by an organization with 50 rules and 10 workflows', hostedLoads);
  const bare = recordLoads(section, 'POST /reviews by an organization with no rules or workflows', bareLoads);
  const selfHosted = recordLoads(section, 'POST /reviews, self-hosted, same database', selfHostedLoads);
  const cores = `on ${os.cpus().length} cores shared with PostgreSQL and the load generator`;
  record({ section, figure: 'hosted / self-hosted, throughput', value: hosted.perSecond / selfHosted.perSecond, unit: '×', target: 0.8, better: 'higher', note: cores });
  record({ section, figure: 'hosted / self-hosted, server CPU per create', value: hosted.cpuMsPerCreate / selfHosted.cpuMsPerCreate, unit: '×', target: null, better: null });
  record({ section, figure: 'hosted / self-hosted, database CPU per create', value: hosted.databaseCpuMsPerCreate / selfHosted.databaseCpuMsPerCreate, unit: '×', target: null, better: null });
  // What the rules and workflows cost apart from the rest of the hosted path (its key, agent, audit log).
  record({ section, figure: '50 rules / no rules, throughput', value: hosted.perSecond / bare.perSecond, unit: '×', target: null, better: null });
  record({ section, figure: '50 rules / no rules, server CPU per create', value: hosted.cpuMsPerCreate / bare.cpuMsPerCreate, unit: '×', target: null, better: null });
}

async function postgresReads(scale: Scale): Promise<void> {
  console.log(`\n9. PostgreSQL reads at scale: ${scale.seededReviews.toLocaleString('en')} reviews stored`);
  const section = 'PostgreSQL reads at scale';
  await onPostgres(
    section,
    1,
    ([server]) => measureReads(section, server.url, scale.seededReviews, scale.readSamples),
    async (databaseUrl) => {
      const dir = tempDir('postgres-migrate');
      try {
        await migrate(dir, { databaseUrl });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const seedStarted = performance.now();
      await seedReviews(databaseUrl, { count: scale.seededReviews, pendingEvery: 10, now: Date.now() });
      console.log(`  (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`);
    },
  );
}

/**
 * Each decision's `review.decided` webhook, from the decide call's answer to its arrival at a
 * receiver on this machine (the self-hosted `webhooks` setting: the same engine as the hosted
 * edition's, whose outbox row commits with the decision).
 */
async function webhookDelivery(scale: Scale): Promise<void> {
  const count = scale.latencyWaiters;
  console.log(`\n10. Webhook delivery: ${count} decisions, each announced to a receiver on this machine`);
  const arrivals = new Map<number, number>();
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; data: { id: number } };
      if (event.type === 'review.decided') arrivals.set(event.data.id, performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/decisions`;
  const dir = tempDir('webhooks');
  const server = await startGreenlight(dir, {
    settings: {
      GREENLIGHT_WEBHOOKS: JSON.stringify([{ url: target, secret: `whsec_${randomBytes(32).toString('base64')}`, events: ['review.decided'] }]),
      GREENLIGHT_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      GREENLIGHT_WEBHOOK_ALLOW_HTTP: 'true',
    },
  });
  try {
    const decidedAt = new Map<number, number>();
    for (let n = 0; n < count; n += 1) {
      const created = await request(`${server.url}/reviews`, 'POST', reviewBody(n));
      const decided = await request(`${server.url}/reviews/${created.body.id}/decide`, 'POST', decisionFor(n));
      if (decided.status !== 200) throw new Error(`decide answered ${decided.status}`);
      decidedAt.set(created.body.id, decided.at);
    }
    const deadline = performance.now() + 60_000;
    while (arrivals.size < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const latencies = [...decidedAt].filter(([id]) => arrivals.has(id)).map(([id, at]) => Math.max(0, (arrivals.get(id) as number) - at));
    const section = 'Webhook delivery';
    record({ section, figure: 'decide response → webhook received, p50', value: percentile(latencies, 50), unit: 'ms', target: null, better: null });
    record({ section, figure: 'decide response → webhook received, p99', value: percentile(latencies, 99), unit: 'ms', target: null, better: null });
    record({ section, figure: 'decisions announced by webhook', value: latencies.length, unit: 'webhooks', target: count, better: 'higher' });
  } finally {
    await server.stop();
    await new Promise((resolve) => receiver.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The hosted edition, where evaluation suites live, with an operator key that makes the measured organization. */
const HOSTED_OPERATOR_KEY = randomBytes(24).toString('base64url');
const HOSTED: NodeJS.ProcessEnv = { GREENLIGHT_EDITION: 'hosted', GREENLIGHT_OPERATOR_KEY: HOSTED_OPERATOR_KEY };

/** Migrates a hosted database and makes the organization whose reviews are seeded: its id and admin key. */
async function hostedOrganization(dir: string, databaseUrl?: string): Promise<{ id: number; key: string }> {
  const server = await startGreenlight(dir, { databaseUrl, settings: HOSTED });
  try {
    const created = await request(`${server.url}/organizations`, 'POST', { name: 'Bench' }, { headers: { authorization: `Bearer ${HOSTED_OPERATOR_KEY}` } });
    if (created.status !== 201) throw new Error(`POST /organizations answered ${created.status}: ${JSON.stringify(created.body)}`);
    return { id: created.body.organization.id, key: created.body.api_key.key };
  } finally {
    await server.stop();
  }
}

/** Creates a suite over every review and runs it once: the run's time as the client sees it, against 10 s. */
async function measureEvaluationRun(section: string, url: string, key: string, decided: number): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  const suite = await request(`${url}/evals`, 'POST', { name: 'Everything' }, { headers });
  if (suite.status !== 201) throw new Error(`POST /evals answered ${suite.status}: ${JSON.stringify(suite.body)}`);
  const started = performance.now();
  let run = await request(`${url}/evals/${suite.body.id}/runs`, 'POST', undefined, { headers });
  // Past the API's wait the run goes on (202): read it until it has finished.
  while (run.status === 202 || (run.status === 200 && run.body.status === 'running')) {
    await sleep(100);
    run = await request(`${url}/evals/${suite.body.id}/runs/${run.body.id}`, 'GET', undefined, { headers });
  }
  if (run.body.status !== 'succeeded') throw new Error(`the run answered ${run.status}: ${JSON.stringify(run.body).slice(0, 500)}`);
  record({ section, figure: `POST /evals/{id}/runs over ${decided.toLocaleString('en')} decided reviews, until finished`, value: run.at - started, unit: 'ms', target: 10_000, better: 'lower' });
  record({ section, figure: 'decided reviews the run counted', value: run.body.result.population.decided, unit: 'reviews', target: decided, better: 'higher', note: `suggested rule: ${run.body.result.suggested_rule.status}` });
}

/** Decided reviews among `count` seeded with one in ten pending (review 0, 10, 20, …). */
const decidedAmong = (count: number): number => count - Math.ceil(count / 10);

async function evaluationsAtScale(scale: Scale): Promise<void> {
  const decided = decidedAmong(scale.evaluatedReviews);
  console.log(`\n11. Evaluation run: a suite over ${decided.toLocaleString('en')} decided reviews (SQLite)`);
  const section = 'Evaluation run';
  const dir = tempDir('evals');
  try {
    const organization = await hostedOrganization(dir);
    const seedStarted = performance.now();
    await seedReviews(path.join(dir, 'greenlight.db'), { count: scale.evaluatedReviews, pendingEvery: 10, now: Date.now(), organizationId: organization.id });
    console.log(`  (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`);
    const server = await startGreenlight(dir, { settings: HOSTED });
    try {
      await measureEvaluationRun(section, server.url, organization.key, decided);
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresEvaluations(scale: Scale): Promise<void> {
  const decided = decidedAmong(scale.evaluatedReviews);
  console.log(`\n12. PostgreSQL evaluation run: a suite over ${decided.toLocaleString('en')} decided reviews`);
  const section = 'PostgreSQL evaluation run';
  let organization = { id: 0, key: '' };
  await onPostgres(
    section,
    1,
    ([server]) => measureEvaluationRun(section, server.url, organization.key, decided),
    async (databaseUrl) => {
      const dir = tempDir('postgres-evals');
      try {
        organization = await hostedOrganization(dir, databaseUrl);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      const seedStarted = performance.now();
      await seedReviews(databaseUrl, { count: scale.evaluatedReviews, pendingEvery: 10, now: Date.now(), organizationId: organization.id });
      console.log(`  (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`);
    },
    HOSTED,
  );
}

const SECTIONS: Record<string, (scale: Scale) => Promise<void>> = {
  delivery: decisionDelivery,
  waiters: concurrentWaiters,
  throughput: createThroughput,
  reads: readsAtScale,
  dashboard,
  'pg-delivery': postgresDelivery,
  'pg-throughput': postgresThroughput,
  'pg-hosted': postgresHostedCreates,
  'pg-reads': postgresReads,
  webhooks: webhookDelivery,
  evals: evaluationsAtScale,
  'pg-evals': postgresEvaluations,
};

function printTable(): void {
  const rows = figures.map((f) => {
    const ratio = ratioOf(f);
    const verdict = meets(f);
    return [
      f.section,
      f.figure,
      f.value === null ? 'n/a' : `${round(f.value)} ${f.unit}`,
      f.target === null ? '' : `${f.better === 'lower' ? '≤' : '≥'} ${f.target} ${f.unit}`,
      ratio === null ? '' : ratio.toFixed(2),
      verdict === null ? '' : verdict ? 'yes' : 'NO',
    ];
  });
  const header = ['section', 'figure', 'value', 'target', 'ratio', 'meets'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const outIndex = args.indexOf('--out');
  const out = outIndex >= 0 ? path.resolve(args[outIndex + 1]) : path.resolve(__dirname, '..', '..', 'bench', quick ? 'results.quick.json' : 'results.json');
  const scale = quick ? QUICK : FULL;
  const started = performance.now();
  console.log(`Greenlight benchmark${quick ? ' (quick)' : ''}: ${os.cpus().length} cores, Node ${process.version}`);

  const onlyIndex = args.indexOf('--only');
  const only = onlyIndex >= 0 ? args[onlyIndex + 1].split(',') : Object.keys(SECTIONS);
  for (const name of only) {
    const section = SECTIONS[name];
    if (!section) throw new Error(`no section ${name}; the sections are ${Object.keys(SECTIONS).join(', ')}`);
    const sectionStarted = performance.now();
    await section(scale);
    console.log(`  (${name}: ${((performance.now() - sectionStarted) / 1000).toFixed(0)} s)`);
  }

  printTable();
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${figures.filter((f) => meets(f) === false).length} figure(s) miss their target; ran in ${seconds.toFixed(0)} s`);
  const results = {
    date: new Date().toISOString(),
    quick,
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memory_gb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    seconds: Math.round(seconds),
    scale,
    figures: figures.map((f) => ({ ...f, ratio: ratioOf(f), meets: meets(f) })),
  };
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written to ${path.relative(process.cwd(), out)}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
