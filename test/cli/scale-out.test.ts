import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCli, freePort, startApiProcess, runCli, stopProgram } from '../support/cli';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/postgres';
import { subscribe } from '../support/event-stream';
import { call, eventually, sampleReview } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Several API processes share one PostgreSQL database: only the `postgres` project runs these. */
const onPostgres = TEST_DATABASE_URL !== undefined;
const why = onPostgres ? '' : ' (PostgreSQL only: skipped on SQLite)';

let temp: ReturnType<typeof makeTempDir>;
let database: TestDatabase;

beforeAll(async () => {
  if (!onPostgres) return;
  temp = makeTempDir('greenlight-scale-out-');
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
  temp?.remove();
});

/** An API process on the shared database (unless `env` names another), in a directory of its own. */
function apiProcess(name: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningCli> {
  return startApiProcess(temp.dir, name, database.url, { args, env });
}

interface AgentAnswer {
  status: number;
  replayed: boolean;
  body: any;
}

/** An agent's blocking create with an Idempotency-Key; a dropped connection comes back as status 0. */
async function blockingCreate(api: string, key: string, action: string): Promise<AgentAnswer> {
  try {
    const response = await fetch(`${api}/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ task_type: 'scale-out', proposed_action: action, blocking: true }),
    });
    return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: await response.json() };
  } catch {
    return { status: 0, replayed: false, body: null };
  }
}

/** The ids of the reviews whose actions start with `prefix`, by action, once all `count` exist (on a busy machine, hundreds of creates take more than the usual wait). */
async function reviewIds(api: string, prefix: string, count: number): Promise<Map<string, number>> {
  let ids = new Map<string, number>();
  await expect
    .poll(async () => {
      const { body } = await call(api, 'GET', `/reviews?q=${encodeURIComponent(prefix)}&page_size=100&page=1`);
      const more = body.total > 100 ? (await call(api, 'GET', `/reviews?q=${encodeURIComponent(prefix)}&page_size=100&page=2`)).body.reviews : [];
      ids = new Map([...body.reviews, ...more].map((review: { id: number; proposed_action: string }) => [review.proposed_action, review.id]));
      return ids.size;
    }, { timeout: 30_000 })
    .toBe(count);
  return ids;
}

describe('API processes sharing one PostgreSQL database', () => {
  it.skipIf(!onPostgres)(`answer 200 agents blocked across two processes with their own decisions, made through the other process${why}`, { timeout: 60_000 }, async () => {
    const [a, b] = [await apiProcess('a'), await apiProcess('b')];
    try {
      const agents = Array.from({ length: 200 }, (_, n) => ({ n, waitsOn: n % 2 === 0 ? a : b, decidesOn: n % 2 === 0 ? b : a, action: `agent ${n} of 200` }));
      const answers = agents.map((agent) => blockingCreate(agent.waitsOn.url, `two-processes-${agent.n}`, agent.action));
      const ids = await reviewIds(a.url, 'of 200', 200);
      for (const agent of agents) {
        const decided = await call(agent.decidesOn.url, 'POST', `/reviews/${ids.get(agent.action)}/decide`, { decision_type: 'approve', notes: `for agent ${agent.n}` });
        expect(decided.status).toBe(200);
      }
      for (const [n, answer] of (await Promise.all(answers)).entries()) {
        expect({ n, status: answer.status, notes: answer.body.decision?.notes }).toEqual({ n, status: 201, notes: `for agent ${n}` });
      }
    } finally {
      await Promise.all([stopProgram(a), stopProgram(b)]);
    }
  });

  it.skipIf(!onPostgres)(`lose no agent when a process is killed while they wait: retries with their Idempotency-Key re-attach elsewhere${why}`, { timeout: 60_000 }, async () => {
    const [doomed, survivor] = [await apiProcess('doomed'), await apiProcess('survivor')];
    try {
      const agents = Array.from({ length: 50 }, (_, n) => ({ key: `survives-a-kill-${n}`, action: `agent ${n} of 50 on the doomed process` }));
      const firstTries = agents.map((agent) => blockingCreate(doomed.url, agent.key, agent.action));
      const acknowledged = await reviewIds(survivor.url, 'on the doomed process', 50);
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      for (const answer of await Promise.all(firstTries)) expect(answer.status).toBe(0);

      const retries = agents.map((agent) => blockingCreate(survivor.url, agent.key, agent.action));
      // Each retry waits on the review its first try made, and its answer is the decision made now.
      for (const agent of agents) {
        const id = acknowledged.get(agent.action);
        expect((await call(survivor.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'reject', notes: agent.key })).status).toBe(200);
      }
      for (const [n, answer] of (await Promise.all(retries)).entries()) {
        expect({ n, status: answer.status, replayed: answer.replayed, id: answer.body.id, notes: answer.body.decision?.notes }).toEqual({
          n,
          status: 201,
          replayed: true,
          id: acknowledged.get(agents[n].action),
          notes: agents[n].key,
        });
      }
      expect((await call(survivor.url, 'GET', '/reviews?q=on%20the%20doomed%20process')).body.total).toBe(50);
    } finally {
      await stopProgram(survivor);
    }
  });
});

describe('hosted API processes sharing one PostgreSQL database', () => {
  const OPERATOR_KEY = 'operator-key-for-scale-out-tests-0123456789';
  const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

  it.skipIf(!onPostgres)(`end a live stream on one process when its API key is revoked through the other${why}`, { timeout: 60_000 }, async () => {
    const own = await createTestDatabase();
    const env = { GREENLIGHT_DATABASE_URL: own.url, GREENLIGHT_EDITION: 'hosted', GREENLIGHT_OPERATOR_KEY: OPERATOR_KEY };
    const [a, b] = [await apiProcess('revocation-a', [], env), await apiProcess('revocation-b', [], env)];
    try {
      const created = await call(b.url, 'POST', '/organizations', { name: 'Acme' }, { headers: bearer(OPERATOR_KEY) });
      const admin = bearer(created.body.api_key.key);
      const agent = (await call(b.url, 'POST', `/organizations/${created.body.organization.id}/api-keys`, { name: 'agent', scope: 'agent' }, { headers: admin })).body;
      const stream = await subscribe(a.url, { headers: bearer(agent.key) });
      // The stream on A hears of what B commits.
      await call(b.url, 'POST', '/reviews', sampleReview, { headers: admin });
      await eventually(() => stream.events.length === 1, 10_000, "B's review on A's stream");

      expect((await call(b.url, 'DELETE', `/api-keys/${agent.id}`, undefined, { headers: admin })).status).toBe(204);
      await stream.done;
      expect(stream.comments.at(-1)).toMatch(/^closed: the API key or session this stream was opened with is no longer valid/);
    } finally {
      await Promise.all([stopProgram(a), stopProgram(b)]);
      await own.drop();
    }
  });
});

describe('greenlight start --workers', () => {
  it('refuses on SQLite, where one process owns the database file', async () => {
    const dir = makeTempDir('greenlight-workers-sqlite-');
    try {
      const result = await runCli(['start', '--api-only', '--workers', '2', '--port', String(await freePort())], {
        cwd: dir.dir,
        env: { GREENLIGHT_DATABASE_URL: 'sqlite:./greenlight.db' },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('greenlight: --workers needs PostgreSQL (database_url: postgres://…): on SQLite one process owns the database file\n');
    } finally {
      dir.remove();
    }
  });

  it.skipIf(!onPostgres)(`runs N API processes on one port that answer each other's agents, and replaces one that dies${why}`, { timeout: 60_000 }, async () => {
    const api = await apiProcess('workers', ['--workers', '2']);
    try {
      await expect.poll(() => api.output()).toMatch(/in 2 worker processes/);
      const workers = (): number[] => fs.readFileSync(`/proc/${api.child.pid}/task/${api.child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      expect(workers()).toHaveLength(2);
      // Connections are shared out between the workers: agents wait on both, decisions come through both.
      const agents = Array.from({ length: 20 }, (_, n) => blockingCreate(api.url, `workers-${n}`, `worker agent ${n}`));
      const ids = await reviewIds(api.url, 'worker agent', 20);
      for (const [action, id] of ids) expect((await call(api.url, 'POST', `/reviews/${id}/decide`, { decision_type: 'approve', notes: action })).status).toBe(200);
      for (const [n, answer] of (await Promise.all(agents)).entries()) expect(answer.body.decision?.notes).toBe(`worker agent ${n}`);

      const [victim] = workers();
      process.kill(victim, 'SIGKILL');
      await expect.poll(() => workers().length === 2 && !workers().includes(victim)).toBe(true);
      await expect.poll(async () => (await fetch(`${api.url}/health`)).status).toBe(200);
      expect(api.output()).toMatch(/an API worker stopped; starting another/);
    } finally {
      await stopProgram(api);
    }
  });

  it.skipIf(!onPostgres)(`opens no more connections than database_pool_size, and one to listen on${why}`, { timeout: 60_000 }, async () => {
    const own = await createTestDatabase();
    const api = await startApiProcess(temp.dir, 'small-pool', own.url, { env: { GREENLIGHT_DATABASE_POOL_SIZE: '2' } });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    try {
      // Forty creates at once would take ten connections by default; two serve them all, in turn.
      const creates = await Promise.all(Array.from({ length: 40 }, (_, n) => call(api.url, 'POST', '/reviews', { ...sampleReview, proposed_action: `small pool ${n}` })));
      expect(creates.map((create) => create.status)).toEqual(creates.map(() => 201));
      // Idle pool connections stay open for ten seconds: what the burst opened is still there to count.
      await admin.connect();
      const { rows } = await admin.query<{ connections: number }>('SELECT count(*)::int AS connections FROM pg_stat_activity WHERE datname = $1', [new URL(own.url).pathname.slice(1)]);
      expect(rows[0].connections).toBeLessThanOrEqual(3);
    } finally {
      await admin.end();
      await stopProgram(api);
      await own.drop();
    }
  });
});
