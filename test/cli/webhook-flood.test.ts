import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type RunningCli, startCli, stopProgram } from '../support/cli';
import { call } from '../support/server';
import { makeTempDir } from '../support/temp';

/** Low, as on a small machine: unbounded, 300 endpoints that never answer took every descriptor the server had. */
const OPEN_FILE_LIMIT = 256;
const OPERATOR_KEY = 'operator-key-for-webhook-flood-0123456789';
const IN_FLIGHT = 12;
const IN_FLIGHT_PER_ORGANIZATION = 8;
const FLOOD_ENDPOINTS = { a: 200, b: 100 };
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/**
 * A receiver that accepts every connection, reads the request and never answers: each delivery
 * holds its socket until the server gives up on it. It counts the connections open at once, by
 * the organization the request's path names.
 */
class SilentReceiver {
  readonly open = { a: 0, b: 0 };
  readonly most = { a: 0, b: 0, all: 0 };
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => this.hold(socket));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  get openInAll(): number {
    return this.open.a + this.open.b;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private hold(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', (chunk: Buffer) => {
      const organization = / \/(a|b)\//.exec(chunk.toString('latin1'))?.[1] as 'a' | 'b' | undefined;
      if (!organization) return;
      this.open[organization] += 1;
      this.most[organization] = Math.max(this.most[organization], this.open[organization]);
      this.most.all = Math.max(this.most.all, this.openInAll);
      socket.once('close', () => (this.open[organization] -= 1));
    });
    socket.once('close', () => this.sockets.delete(socket));
  }
}

let temp: ReturnType<typeof makeTempDir>;
let receiver: SilentReceiver;
let target: string;
let server: RunningCli | undefined;
let env: NodeJS.ProcessEnv;
const keys: Record<'a' | 'b' | 'bystander', Record<string, string>> = { a: {}, b: {}, bystander: {} };

function start(): Promise<RunningCli> {
  return startCli(['--api-only'], { cwd: temp.dir, env, via: ['sh', '-c', `ulimit -n ${OPEN_FILE_LIMIT} && exec "$0" "$@"`] });
}

beforeAll(async () => {
  temp = makeTempDir('greenlight-webhook-flood-');
  receiver = new SilentReceiver();
  target = await receiver.listen();
  env = {
    GREENLIGHT_EDITION: 'hosted',
    GREENLIGHT_OPERATOR_KEY: OPERATOR_KEY,
    GREENLIGHT_API_PORT: String(await freePort()),
    GREENLIGHT_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    GREENLIGHT_WEBHOOK_ALLOW_HTTP: 'true',
    GREENLIGHT_WEBHOOK_MAX_IN_FLIGHT: String(IN_FLIGHT),
    GREENLIGHT_WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION: String(IN_FLIGHT_PER_ORGANIZATION),
    GREENLIGHT_MAX_WEBHOOKS_PER_ORGANIZATION: String(FLOOD_ENDPOINTS.a),
  };
  server = await start();
  for (const name of ['a', 'b', 'bystander'] as const) {
    const created = await call(server.url, 'POST', '/organizations', { name }, { headers: bearer(OPERATOR_KEY) });
    keys[name] = bearer(created.body.api_key.key);
  }
  for (const name of ['a', 'b'] as const) {
    for (let i = 0; i < FLOOD_ENDPOINTS[name]; i++) {
      const created = await call(server.url, 'POST', '/webhooks', { url: `${target}/${name}/${i}`, events: ['review.created'] }, { headers: keys[name] });
      expect(created.status).toBe(201);
    }
  }
}, 120_000);

afterAll(async () => {
  await stopProgram(server);
  await receiver?.close();
  temp?.remove();
});

/** Creates by an organization without endpoints: all answered 201 while the others' deliveries hang. */
async function bystanderCreates(count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    statuses.push((await call(server!.url, 'POST', '/reviews', { task_type: 'bystander', proposed_action: `Create ${i}` }, { headers: keys.bystander })).status);
  }
  return statuses;
}

function expectWithinCaps(): void {
  expect(receiver.most.a).toBeLessThanOrEqual(IN_FLIGHT_PER_ORGANIZATION);
  expect(receiver.most.b).toBeLessThanOrEqual(IN_FLIGHT_PER_ORGANIZATION);
  expect(receiver.most.all).toBe(IN_FLIGHT);
}

describe(`${FLOOD_ENDPOINTS.a + FLOOD_ENDPOINTS.b} webhook endpoints that never answer, at an open-file limit of ${OPEN_FILE_LIMIT}`, () => {
  it('hold no more deliveries than the caps, and every other organization is still answered', async () => {
    for (const name of ['a', 'b'] as const) {
      expect((await call(server!.url, 'POST', '/reviews', { task_type: 'flood', proposed_action: `Flood ${name}` }, { headers: keys[name] })).status).toBe(201);
    }
    // Organization a has its share; b the rest of the process's.
    await expect.poll(() => receiver.openInAll).toBeGreaterThanOrEqual(IN_FLIGHT);
    expect(await bystanderCreates(20)).toEqual(Array(20).fill(201));
    expect(server!.child.exitCode).toBeNull();
    expectWithinCaps();
  });

  it('after a kill -9, sends what is pending within the same caps and stays up', async () => {
    server!.child.kill('SIGKILL');
    await server!.exited;
    server = undefined;
    await expect.poll(() => receiver.openInAll).toBe(0);
    server = await start();
    await expect.poll(() => receiver.openInAll).toBeGreaterThanOrEqual(IN_FLIGHT);
    expect(await bystanderCreates(20)).toEqual(Array(20).fill(201));
    expect(server.child.exitCode).toBeNull();
    expectWithinCaps();
  });
});
