import path from 'node:path';
import { type Config, defaultConfig } from '../../server/config/settings';
import { type RunningServer, type StartOptions, startServer } from '../../server/runtime';
import { makeTempDir } from './temp';

export interface TestServer extends RunningServer {
  dataDir: string;
  config: Config;
  /** Closes the server (if still open) and removes its data directory. */
  dispose(): Promise<void>;
}

/**
 * The real server on a random loopback port with its own SQLite file, checking every
 * response against the OpenAPI document.
 */
export async function startTestServer(overrides: Partial<Config> = {}, options: StartOptions = {}): Promise<TestServer> {
  const temp = makeTempDir();
  const config: Config = {
    ...defaultConfig(),
    api_port: 0,
    data_dir: temp.dir,
    database_url: `sqlite:${path.join(temp.dir, 'greenlight.db')}`,
    ...overrides,
  };
  const server = await startServer(config, { validateResponses: true, drainMs: 1_000, ...options });
  return {
    ...server,
    dataDir: temp.dir,
    config,
    dispose: async () => {
      await server.close();
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

export const sampleReview = {
  task_type: 'refund',
  proposed_action: 'Refund order 1042 in full (EUR 250.00)',
};
