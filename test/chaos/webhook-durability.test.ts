import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { TEST_DATABASE_URL } from '../support/postgres';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

const OPERATOR_KEY = 'operator-key-for-webhook-durability-0123456789';
const ROUNDS = 20;

let temp: ReturnType<typeof makeTempDir>;
let receiver: http.Server;
/** Every attempt the receiver saw, by webhook-id, in order. */
const attempts: string[] = [];
/** Ids whose first attempt is held unanswered: the server dies while delivering it. */
const held = new Set<string>();

beforeAll(async () => {
  temp = makeTempDir('greenlight-webhook-durability-');
  receiver = http.createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    attempts.push(id);
    req.resume();
    if (!held.has(id)) {
      held.add(id);
      // Never answered: the server is killed with this delivery in flight.
      req.socket.on('error', () => undefined);
      return;
    }
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  temp?.remove();
});

/**
 * On SQLite one process owns the file, so a restarted server takes over what the killed one was
 * sending at once; on PostgreSQL another process may still be sending it, and its claim has to
 * run out first (a minute), which this test does not wait for.
 */
it.runIf(!TEST_DATABASE_URL)('delivers every decision after a kill -9 between its commit and its delivery, 20 rounds, each with a stable webhook-id', async () => {
  const env = {
    GREENLIGHT_EDITION: 'hosted',
    GREENLIGHT_OPERATOR_KEY: OPERATOR_KEY,
    GREENLIGHT_API_PORT: String(await freePort()),
    GREENLIGHT_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    GREENLIGHT_WEBHOOK_ALLOW_HTTP: 'true',
  };
  let server: RunningCli | undefined = await startCli(['--api-only'], { cwd: temp.dir, env });
  try {
    const created = await call(server.url, 'POST', '/organizations', { name: 'Durable' }, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });
    const admin = { authorization: `Bearer ${created.body.api_key.key}` };
    const reviewer = (await call(server.url, 'POST', '/users', { email: 'rae@durable.example', name: 'Rae', role: 'reviewer' }, { headers: admin })).body.id;
    const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/decisions`;
    expect((await call(server.url, 'POST', '/webhooks', { url: target, events: ['review.decided'] }, { headers: admin })).status).toBe(201);

    const delivered: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const review = (await call(server.url, 'POST', '/reviews', { task_type: 'refund', proposed_action: `Refund ${round}` }, { headers: admin })).body.id;
      const seen = attempts.length;
      expect((await call(server.url, 'POST', `/reviews/${review}/decide`, { decision_type: 'approve', reviewer_id: reviewer }, { headers: admin })).status).toBe(200);
      // The decision has committed and its delivery is in flight (held by the receiver): now the process dies.
      await expect.poll(() => attempts.length).toBeGreaterThan(seen);
      const id = attempts[attempts.length - 1];
      server.child.kill('SIGKILL');
      await server.exited;
      server = undefined;
      server = await startCli(['--api-only'], { cwd: temp.dir, env });
      await expect.poll(() => attempts.filter((attempt) => attempt === id).length).toBe(2);
      delivered.push(id);
    }
    expect(new Set(delivered).size).toBe(ROUNDS);
    for (const id of delivered) expect(id).toMatch(/^msg_\d+$/);
  } finally {
    await stopProgram(server);
  }
}, 180_000);
