import fs from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { makeTempDir } from '../support/temp';
import { Tally, writeFigures } from './support/figures';
import { everyReviewListed } from './support/stored';
import { inParallel } from '../../bench/http';
import { jsonOf, jsonRequest, type RawResponse, send } from '../support/raw-http';

const CREATES = 5_000;
const WANTED_IN_FLIGHT = 500;
/** Descriptors neither side may count on for sockets: stdio, the database and its journal, node's own. */
const RESERVED_DESCRIPTORS = 100;
const TASK_TYPE = 'burst';
/** How SQLite says it could not get the write lock; none of it may reach a client. */
const SQLITE_BUSY = /SQLITE_BUSY|database is locked|SQLITE_LOCKED/i;

interface Refusal {
  index: number;
  status: number;
  retryAfter?: string;
  body: string;
}

/** The soft limit on open files this process (and the server it starts) inherited; nothing here raises it. */
function openFileLimit(): number {
  const limits = fs.existsSync('/proc/self/limits') ? fs.readFileSync('/proc/self/limits', 'utf8') : '';
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  return soft ? Number(soft) : 1_024;
}

const fdLimit = openFileLimit();
// Each request in flight holds one socket in this process and one in the server.
const inFlight = Math.min(WANTED_IN_FLIGHT, fdLimit - RESERVED_DESCRIPTORS);
const statuses = new Tally();
const serverErrors: Refusal[] = [];
const leakedBusy: Refusal[] = [];
const noAnswer: string[] = [];
const created = new Set<number>();
let temp: ReturnType<typeof makeTempDir>;
let server: RunningCli;
let durationMs = 0;

function record(index: number, response: RawResponse): void {
  statuses.add(response.status);
  const body = response.body.toString('utf8');
  const refusal = { index, status: response.status, retryAfter: response.headers['retry-after'], body: body.slice(0, 300) };
  if (response.status === 201) created.add(jsonOf<{ id: number }>(response)!.id);
  if (response.status >= 500) serverErrors.push(refusal);
  if (SQLITE_BUSY.test(body)) leakedBusy.push(refusal);
}

beforeAll(async () => {
  temp = makeTempDir('greenlight-burst-');
  server = await startCli(['--api-only', '--port', String(await freePort())], { cwd: temp.dir });
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const indexes = Array.from({ length: CREATES }, (_, i) => i);
  const started = Date.now();
  await inParallel(indexes, inFlight, async (index) => {
    const body = { task_type: TASK_TYPE, proposed_action: `burst create ${index}`, urgency: 'high', metadata: { index } };
    try {
      record(index, await send(server.url, jsonRequest('POST', '/reviews', body), { agent, timeoutMs: 60_000 }));
    } catch (error) {
      statuses.add('no answer');
      noAnswer.push(`create ${index}: ${(error as Error).message}`);
    }
  });
  durationMs = Date.now() - started;
  agent.destroy();
}, 180_000);

afterAll(async () => {
  writeFigures('burst', {
    requests_sent: statuses.sum(),
    in_flight: inFlight,
    open_file_limit: fdLimit,
    duration_ms: durationMs,
    creates_per_second: Math.round((statuses.sum() / durationMs) * 1000),
    created: created.size,
    server_errors: serverErrors.length,
    deliberate_503s: serverErrors.filter((e) => e.status === 503 && e.retryAfter !== undefined).length,
    sqlite_busy_leaks: leakedBusy.length,
    no_answer: noAnswer.length,
    status_histogram: statuses,
    first_server_errors: serverErrors.slice(0, 10),
  });
  await stopProgram(server);
  temp?.remove();
});

describe(`a burst of ${CREATES} creates, ${WANTED_IN_FLIGHT} in flight`, () => {
  it('answered every create', () => {
    expect(noAnswer.slice(0, 10)).toEqual([]);
    expect(statuses.sum()).toBe(CREATES);
  });

  it('answers no create with a 5xx other than a deliberate 503 with Retry-After', () => {
    const accidental = serverErrors.filter((e) => !(e.status === 503 && e.retryAfter !== undefined));
    expect(accidental.slice(0, 10)).toEqual([]);
  });

  it('never lets SQLITE_BUSY reach a client', () => {
    expect(leakedBusy.slice(0, 10)).toEqual([]);
  });

  it('stores exactly the reviews it answered 201 for', async () => {
    const stored = (await everyReviewListed(server.url, `task_type=${TASK_TYPE}`)).map((review) => review.id);
    expect(stored.length).toBe(created.size);
    expect(new Set(stored)).toEqual(created);
  });
});
