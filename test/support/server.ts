import type { IncomingHttpHeaders } from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { type Config, defaultConfig } from '../../server/config/settings';
import type { RunningServer, StartOptions } from '../../server/app/api-server';
import { startServerUnderTest, type TestHandle } from '../../server/app/test-handle';
import { migrate } from '../../server/db/migrate';
import { openSqlite } from '../../server/db/sqlite';
import { createTestDatabase, TEST_DATABASE_URL } from './postgres';
import { makeTempDir } from './temp';

export interface TestServer extends RunningServer {
  /** What the test may look at inside the server, beside its HTTP interface. */
  test: TestHandle;
  dataDir: string;
  config: Config;
  /** Closes the server (if still open) and removes its data directory. */
  dispose(): Promise<void>;
}

/**
 * scrypt at about a hundredth of its production cost: the tests sign people in by the hundred, and
 * what they prove does not rest on how long a hash takes (each hash records its cost).
 */
const CHEAP_PASSWORD_COST = { N: 2 ** 10, r: 8, p: 1 };

/**
 * The receipt keys' key-encryption secret, the same for every test server, as every process of
 * one deployment shares it: tests start a second server on another's PostgreSQL database from
 * a data directory of its own. (The file kept in data_dir when it is empty is tested apart.)
 */
export const TEST_RECEIPT_KEY_ENCRYPTION_KEY = 'test-receipt-key-encryption-key-0123456789';

let migratedSqlite: Promise<string> | undefined;

/**
 * An SQLite file with every migration applied, made once per test worker (and removed when it
 * exits): each test server starts on a copy of it, as each PostgreSQL one starts on a copy of the
 * run's template, rather than spending a tenth of a second migrating a file of its own, hundreds
 * of times a run. The migrations themselves are tested on files of their own.
 */
function migratedSqliteFile(): Promise<string> {
  migratedSqlite ??= (async () => {
    const temp = makeTempDir('greenlight-template-');
    process.once('exit', temp.remove);
    const file = path.join(temp.dir, 'greenlight.db');
    const db = openSqlite(file);
    try {
      await migrate(db.sequelize);
    } finally {
      await db.close();
    }
    return file;
  })();
  return migratedSqlite;
}

/**
 * The real server on a random loopback port with its own SQLite file, checking every
 * response against the OpenAPI document.
 */
export async function startTestServer(overrides: Partial<Config> = {}, options: StartOptions = {}): Promise<TestServer> {
  const temp = makeTempDir();
  // A database of its own, unless the test reopens another server's.
  const database = overrides.database_url === undefined && TEST_DATABASE_URL ? await createTestDatabase() : null;
  if (overrides.database_url === undefined && !TEST_DATABASE_URL) fs.copyFileSync(await migratedSqliteFile(), path.join(temp.dir, 'greenlight.db'));
  const config: Config = {
    ...defaultConfig(),
    api_port: 0,
    data_dir: temp.dir,
    database_url: database?.url ?? `sqlite:${path.join(temp.dir, 'greenlight.db')}`,
    receipt_key_encryption_key: TEST_RECEIPT_KEY_ENCRYPTION_KEY,
    ...overrides,
  };
  let server: RunningServer & { test: TestHandle };
  try {
    server = await startServerUnderTest(config, { validateResponses: true, drainMs: 1_000, passwordCost: CHEAP_PASSWORD_COST, ...options });
  } catch (error) {
    await database?.drop();
    temp.remove();
    throw error;
  }
  return {
    ...server,
    dataDir: temp.dir,
    config,
    dispose: async () => {
      await server.close();
      await database?.drop();
      temp.remove();
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A request with a JSON body (when given) whose answer is parsed as JSON. */
export async function call<T = any>(
  baseUrl: string,
  method: string,
  urlPath: string,
  body?: unknown,
  init: RequestInit = {},
): Promise<JsonResponse<T>> {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    ...init,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers as Record<string, string>) },
    body: body === undefined ? init.body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** Waits until `condition` holds, checking every few milliseconds; fails after `timeoutMs`. */
export async function eventually(condition: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** How many reviews the API holds, whatever their status. */
export async function storedReviewCount(baseUrl: string): Promise<number> {
  return (await call(baseUrl, 'GET', '/reviews')).body.total;
}

/** Whether a server answers at `baseUrl`: false once it has stopped listening. */
export async function isServing(baseUrl: string): Promise<boolean> {
  return fetch(`${baseUrl}/health`).then(
    (response) => response.ok,
    () => false,
  );
}

export async function reviewStatus(baseUrl: string, reviewId: number): Promise<string> {
  return (await call(baseUrl, 'GET', `/reviews/${reviewId}`)).body.status;
}

/**
 * An RFC 9457 problem answer with `status`, and a `detail` matching `detail` when given. Takes
 * raw-http's answers (node:http headers, body unparsed) as well as call()'s, so tests that must
 * send what fetch cannot still hold refusals to the same checks.
 */
export function expectProblem(
  response: { status: number; headers: Headers | IncomingHttpHeaders; body: any },
  status: number,
  detail?: RegExp,
): void {
  expect(response.status).toBe(status);
  const contentType = response.headers instanceof Headers ? response.headers.get('content-type') : response.headers['content-type'];
  expect(contentType).toMatch(/^application\/problem\+json/);
  const body = Buffer.isBuffer(response.body) ? JSON.parse(response.body.toString('utf8')) : response.body;
  expect(body).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String) });
  if (detail) expect(body.detail).toMatch(detail);
}

/** Every file under a server's attachments directory, the holding files of uploads under way included. */
export function attachmentFilesOf(dataDir: string): string[] {
  const root = path.join(dataDir, 'attachments');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

export const sampleReview = {
  task_type: 'refund',
  proposed_action: 'Refund order 1042 in full (EUR 250.00)',
};
