import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type EventFeed, NONE_FROM_ELSEWHERE } from '../domain/shared/events';
import type { AttemptOutcome, ClaimedDelivery, DeliveryRoom, WebhookRepository } from '../domain/webhooks/ports';
import type { OwedDeliveries } from '../domain/webhooks/webhooks';
import { type Clock, type Log, SYSTEM, type UnitOfWork } from '../domain/shared/unit-of-work';
import { retryDelayMs, signatureHeader } from '../domain/webhooks/signing';
import { checkTarget, type Resolve, type TargetPolicy } from '../domain/webhooks/targets';
import { WakeLoop } from '../system/wake-loop';

/** Only 2xx is success, and an answer must come within this. */
const TIMEOUT_MS = 15_000;
/** Of a receiver's answer, only this much is read: it says nothing Greenlight needs. */
const MAX_ANSWER_BYTES = 4096;
/** How long a process holds a delivery it sends; past it, another process takes it over (the first died). */
const CLAIM_MS = 60_000;
/** After a look at the outbox failed (the database unreachable, out of files), how soon the next. */
const AFTER_FAILURE_MS = 1_000;
/**
 * The longest one timer waits: a due time far off is looked at again by then, and so are
 * deliveries another process queued without an event this one hears of (a test, a retry).
 */
const MAX_SLEEP_MS = 30_000;

/**
 * Deliveries sent at once by this process. Each holds a socket (a file descriptor) for up to
 * `TIMEOUT_MS`; unbounded, an organization's endpoints that never answer took every descriptor the
 * process had, and its next write failed.
 */
export interface DeliveryLimits {
  /** In all (`webhook_max_in_flight`). */
  inFlight: number;
  /** Of one organization (`webhook_max_in_flight_per_organization`): its slow endpoints leave the rest to the others. */
  inFlightPerOrganization: number;
}

export interface DispatcherOptions {
  webhooks: WebhookRepository;
  unitOfWork: UnitOfWork;
  feed: EventFeed;
  /** Which of this process's events owed deliveries: the commits after which there is something to send. */
  owed: OwedDeliveries;
  /** Seconds before each retry (`webhook_retry_schedule`). */
  scheduleSeconds: readonly number[];
  limits: DeliveryLimits;
  targets: TargetPolicy;
  log: Log;
  clock?: Clock;
  resolve?: Resolve;
}

interface Answer {
  statusCode: number;
  retryAfterSeconds: number | null;
}

const lookupAll: Resolve = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/** `Retry-After` in seconds, from either of its forms. */
function retryAfterOf(header: string | undefined, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Sends the deliveries the outbox wrote, in every API process at once without sending one
 * twice (each claims rows for a while), and survives restarts (what was due is sent on start,
 * within the same limits). One endpoint's deliveries go one at a time, and a slow receiver holds
 * up only its own; no more than `limits` are in flight, so neither is an organization's many.
 */
export class WebhookDispatcher {
  private readonly clock: Clock;
  private readonly resolve: Resolve;
  /** Endpoints with a delivery in flight here. */
  private readonly busy = new Set<number>();
  /** Deliveries in flight here, by organization (null: the self-hosted installation). */
  private readonly inFlightOf = new Map<number | null, number>();
  private readonly loop: WakeLoop;
  private unsubscribe: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: DispatcherOptions) {
    this.clock = options.clock ?? Date.now;
    this.resolve = options.resolve ?? lookupAll;
    this.loop = new WakeLoop(
      () => this.claimAndSend(),
      (error) => this.options.log.error('webhook dispatcher failed; retrying shortly', { error: String(error) }),
      AFTER_FAILURE_MS,
    );
  }

  async start(): Promise<void> {
    await this.options.webhooks.releaseOrphanedClaims();
    // Look for due deliveries after each commit that wrote some. The process that commits a change
    // looks for what it owes; another's would only race it for the rows.
    this.unsubscribe = this.options.feed.subscribe((event) => {
      if (this.options.owed.owedBy(event)) this.wake();
    }, NONE_FROM_ELSEWHERE);
    this.wake();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for due deliveries now (again once the look under way ends, if one is). */
  wake(): void {
    this.loop.wake();
  }

  private async claimAndSend(): Promise<void> {
    const now = this.clock();
    for (const delivery of await this.options.webhooks.claimDue(now, now + CLAIM_MS, this.room())) this.startSending(delivery);
    const room = this.room();
    if (room.total <= 0) {
      // The end of a delivery under way wakes this.
      this.loop.cancelSleep();
      return;
    }
    const due = await this.options.webhooks.nextDue(this.clock(), room);
    this.loop.sleep(due === null ? MAX_SLEEP_MS : Math.min(Math.max(0, due - this.clock()), MAX_SLEEP_MS));
  }

  /** What `limits` leave room for beside the deliveries in flight here. */
  private room(): DeliveryRoom {
    const { inFlight, inFlightPerOrganization } = this.options.limits;
    const organizations = new Map([...this.inFlightOf].map(([organizationId, count]) => [organizationId, inFlightPerOrganization - count]));
    return { total: inFlight - this.inFlight.size, perOrganization: inFlightPerOrganization, organizations, busyEndpoints: [...this.busy] };
  }

  private startSending(delivery: ClaimedDelivery): void {
    const organizationId = delivery.organization_id;
    this.busy.add(delivery.webhook_id);
    this.inFlightOf.set(organizationId, (this.inFlightOf.get(organizationId) ?? 0) + 1);
    const sending = this.send(delivery).finally(() => {
      this.busy.delete(delivery.webhook_id);
      const left = (this.inFlightOf.get(organizationId) ?? 1) - 1;
      if (left > 0) this.inFlightOf.set(organizationId, left);
      else this.inFlightOf.delete(organizationId);
      this.inFlight.delete(sending);
      this.wake();
    });
    this.inFlight.add(sending);
  }

  /**
   * One attempt, and what came of it recorded. Never rejects: a delivery whose outcome could not
   * be stored (the database unreachable, or out of files) stays claimed, and is sent again once
   * its claim runs out; an endpoint that could not be disabled stays on until a later delivery
   * fails for good.
   */
  private async send(delivery: ClaimedDelivery): Promise<void> {
    const started = this.clock();
    let outcome: AttemptOutcome;
    try {
      const answer = await this.post(delivery);
      outcome = this.judge(delivery, answer, started);
    } catch (error) {
      outcome = this.failure(delivery, null, (error as Error).message, null, started);
    }
    try {
      await this.options.webhooks.recordAttempt(delivery.id, outcome, this.clock());
      if (outcome.kind === 'failed') await this.disable(delivery, outcome.error);
    } catch (error) {
      this.options.log.error('could not store the outcome of a webhook delivery attempt', { delivery_id: delivery.id, error: String(error) });
    }
  }

  private judge(delivery: ClaimedDelivery, answer: Answer, started: number): AttemptOutcome {
    const durationMs = this.clock() - started;
    if (answer.statusCode >= 200 && answer.statusCode < 300) return { kind: 'delivered', statusCode: answer.statusCode, durationMs };
    if (answer.statusCode === 410) return { kind: 'failed', statusCode: 410, error: 'the receiver answered 410 Gone: it no longer wants these events', durationMs };
    return this.failure(delivery, answer.statusCode, `the receiver answered ${answer.statusCode}`, answer.retryAfterSeconds, started);
  }

  /** A failed attempt: retried on the schedule, or, once it is spent, the last. */
  private failure(delivery: ClaimedDelivery, statusCode: number | null, error: string, retryAfterSeconds: number | null, started: number): AttemptOutcome {
    const durationMs = this.clock() - started;
    const delay = retryDelayMs(delivery.attempts + 1, this.options.scheduleSeconds, retryAfterSeconds);
    if (delay === null) return { kind: 'failed', statusCode, error: `${error}; the retry schedule is spent`, durationMs };
    return { kind: 'retry', nextAttemptAt: this.clock() + delay, statusCode, error, durationMs };
  }

  /** The endpoint stops, with why, recorded in the organization's audit log as the system's doing. */
  private async disable(delivery: ClaimedDelivery, reason: string): Promise<void> {
    const organizationId = delivery.organization_id;
    await this.options.unitOfWork.run(async (tx) => {
      await this.options.webhooks.disable(tx, delivery.webhook_id, reason, this.clock());
      if (organizationId !== null) tx.audit({ organization_id: organizationId, action: 'webhook.disabled', target_type: 'webhook', target_id: delivery.webhook_id, data: { reason } });
    }, { by: SYSTEM });
    this.options.log.info('webhook endpoint disabled', { webhook_id: delivery.webhook_id, reason });
  }

  /**
   * POSTs the delivery to the address the guard allowed, and only to it: the connection is
   * made to that address (a name that resolves elsewhere a moment later cannot redirect it),
   * redirects are not followed, and no more than a little of the answer is read.
   */
  private async post(delivery: ClaimedDelivery): Promise<Answer> {
    const target = await checkTarget(delivery.url, this.options.targets, this.resolve);
    if (!target.ok) throw new Error(`refused: ${target.reason}`);
    const url = new URL(delivery.url);
    const timestamp = Math.floor(this.clock() / 1000);
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<Answer>((resolve, reject) => {
      const request = transport.request(
        url,
        {
          method: 'POST',
          lookup,
          timeout: TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Greenlight-Webhooks/1',
            'webhook-id': delivery.message_id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatureHeader(delivery.secrets, delivery.message_id, timestamp, delivery.payload),
          },
        },
        (response) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) response.destroy();
          });
          const answer = { statusCode: response.statusCode ?? 0, retryAfterSeconds: retryAfterOf(response.headers['retry-after'], this.clock()) };
          response.on('end', () => resolve(answer));
          response.on('close', () => resolve(answer));
          response.on('error', () => resolve(answer));
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
      request.on('error', (error: NodeJS.ErrnoException) => reject(new Error(error.code ? `${error.code}: ${error.message}` : error.message)));
      request.end(delivery.payload);
    });
  }
}
