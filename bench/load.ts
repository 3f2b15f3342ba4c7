import fs from 'node:fs';
import autocannon from 'autocannon';
import { type ReviewBody, reviewBody } from './http';
import { type BenchProcess, cpuSeconds } from './processes';

export interface CreateLoad {
  perSecond: number;
  cpuMsPerCreate: number;
  /** PostgreSQL's server processes' CPU time per create (zero on SQLite, which runs inside the server). */
  databaseCpuMsPerCreate: number;
}

export interface LoadOptions {
  connections?: number;
  /** Also the CPU time of PostgreSQL's processes (everything on the machine's server: keep it otherwise idle). */
  postgres?: boolean;
  /** The bodies each connection sends in turn (by default one review, again and again). */
  bodies?: ReviewBody[];
  /** Sent with every create (an organization's API key). */
  headers?: Record<string, string>;
}

/** The share of a round's length a server is loaded, unmeasured, before the round: long enough for V8 to have compiled what a create runs. */
const WARM_FRACTION = 0.3;

/** POST /reviews from the connections shared out over `targets`, and the CPU time their processes (and PostgreSQL's) spent per create. */
export async function createLoad(targets: BenchProcess[], seconds: number, { connections = 10, postgres = false, bodies, headers = {} }: LoadOptions = {}): Promise<CreateLoad> {
  const load = (target: BenchProcess, length: { duration: number } | { amount: number }): Promise<autocannon.Result> =>
    autocannon({
      url: `${target.url}/reviews`,
      method: 'POST',
      connections: connections / targets.length,
      ...length,
      headers: { ...headers, 'content-type': 'application/json' },
      ...(bodies ? { requests: bodies.map((body) => ({ body: JSON.stringify(body) })) } : { body: JSON.stringify(reviewBody(1)) }),
    });
  // A fresh server's first creates compile its request validator and warm its statements: a
  // second or more of CPU that a short round on shared cores would otherwise measure instead
  // of the creates (four processes doing it at once left a 2 s round with nothing answered).
  await Promise.all(targets.map((target) => load(target, { amount: 10 * connections })));
  // Then V8 is still compiling the hot paths: a fresh server's creates per second climb for 3 to 4 s
  // (by 1 s steps, on PostgreSQL: a hosted server with the bench's rules from ~660 to ~1,200 and a
  // self-hosted one from ~730 to ~1,450), which a round measures as the path's cost unless it
  // waits them out. Quick runs, whose figures are never judged, do not.
  const warmSeconds = Math.floor(seconds * WARM_FRACTION);
  if (warmSeconds > 0) await Promise.all(targets.map((target) => load(target, { duration: warmSeconds })));
  const cpuBefore = targets.map((target) => cpuSeconds(target.pid));
  const databaseBefore = postgres ? databaseCpuSeconds() : new Map<number, number>();
  const results = await Promise.all(targets.map((target) => load(target, { duration: seconds })));
  const cpuSpent = targets.reduce((sum, target, i) => sum + cpuSeconds(target.pid) - cpuBefore[i], 0);
  const databaseSpent = postgres ? databaseCpuSpent(databaseBefore, databaseCpuSeconds()) : 0;
  const failed = results.reduce((sum, result) => sum + result.non2xx + result.errors + result.timeouts, 0);
  if (failed > 0) throw new Error(`${failed} creates failed under load`);
  const created = results.reduce((sum, result) => sum + result['2xx'], 0);
  return {
    perSecond: results.reduce((sum, result) => sum + result.requests.average, 0),
    cpuMsPerCreate: (cpuSpent * 1000) / created,
    databaseCpuMsPerCreate: (databaseSpent * 1000) / created,
  };
}

/** CPU time PostgreSQL's server processes have used so far, in seconds: each connection's backend, the writers and the WAL. */
function databaseCpuSeconds(): Map<number, number> {
  const spent = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      spent.set(Number(entry), cpuSeconds(Number(entry)));
    } catch {
      // gone between the listing and the read
    }
  }
  return spent;
}

/** The database's CPU time spent between two readings; a backend that started in between counts from zero. */
function databaseCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, seconds] of after) spent += seconds - (before.get(pid) ?? 0);
  return spent;
}

