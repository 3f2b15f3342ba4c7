import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Answer {
  status: number;
  body: any;
  /** performance.now() when the last byte arrived. */
  at: number;
}

/**
 * Reused connections for the measuring client: one request after another, no handshakes in the
 * figures. A connection left idle for 4 s is closed here: the servers close theirs after 5 s,
 * and a request sent on one as a busy server closes it is lost ("socket hang up"), which after a
 * bench's idle pause happened often enough to end a run.
 */
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 16, timeout: 4_000 });

/**
 * One HTTP exchange. `ownConnection` gives the request a socket of its own, as an agent
 * process holding a blocking create would have.
 */
export function request(url: string, method: string, body?: unknown, options: { ownConnection?: boolean; headers?: Record<string, string> } = {}): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent: options.ownConnection ? false : keepAlive,
        headers: { ...options.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const at = performance.now();
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON; keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, at });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Milliseconds one request takes, measured by the client. */
export async function timed(url: string): Promise<number> {
  const started = performance.now();
  const answer = await request(url, 'GET');
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.at - started;
}

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(samples: number[]): number {
  return percentile(samples, 50);
}

/**
 * Runs `work` on every item, at most `concurrency` at a time. Items are pulled from the
 * iterable as workers free up, so a generator can produce them lazily (a fuzz campaign need
 * not hold every generated body in memory at once).
 */
export async function inParallel<T>(items: Iterable<T>, concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A review as an agent would send it: a few hundred bytes with nested metadata. */
/** A review create's body, as the baseline servers read it. */
export interface ReviewBody {
  blocking?: boolean;
  organization_id?: number;
  agent_id?: number;
  task_type: string;
  proposed_action: string;
  agent_reasoning?: string;
  confidence_score?: number;
  urgency?: string;
  framework?: string;
  metadata?: unknown;
}

/** The review's columns in the order the baseline servers' inserts list them, up to its metadata. */
export function reviewColumnValues(body: ReviewBody): unknown[] {
  return [
    body.organization_id ?? null,
    body.agent_id ?? null,
    body.task_type,
    body.proposed_action,
    body.agent_reasoning ?? null,
    body.confidence_score ?? null,
    body.urgency ?? 'medium',
    body.framework ?? null,
    JSON.stringify(body.metadata ?? {}),
  ];
}

export function reviewBody(n: number): ReviewBody {
  return {
    task_type: 'refund',
    proposed_action: `Refund order #${n} in full (EUR 250.00) to the original card ending 4242.`,
    agent_reasoning: 'The carrier confirms the parcel was lost in transit; the customer has been waiting 12 days.',
    confidence_score: 0.82,
    urgency: 'high',
    framework: 'langchain',
    agent_id: 7,
    metadata: { order: { id: n, total: 250, currency: 'EUR' }, customer: { tier: 'gold' } },
  };
}
