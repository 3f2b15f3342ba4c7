import type { Config } from '../config/settings';
import type { Database } from '../db/connection';
import { oneAtATime } from '../db/one-at-a-time';
import type { Outbox } from '../db/outbox';
import type { AttachmentStore } from '../db/attachment-store';
import type { ReviewStore } from '../db/review-store';
import type { WebhookStore } from '../db/webhook-store';
import type { ChatMessageStore } from '../db/chat-message-store';
import { ChatDispatcher } from '../integrations/chat-dispatcher';
import type { ChatMessaging } from './slack';
import type { EventFeed } from '../domain/shared/events';
import type { OwedDeliveries } from '../domain/webhooks/webhooks';
import type { Evaluations } from '../domain/evaluations/evaluations';
import type { OneAtATime } from '../domain/shared/unit-of-work';
import { ReviewExpiry } from '../domain/reviews/expiry';
import type { Policy } from '../domain/routing/review-policy';
import type { UnitOfWork } from '../domain/shared/unit-of-work';
import type { ReviewUseCases } from '../domain/reviews/use-cases';
import { outgoingSocketsFor } from '../http/connections';
import type { Logger } from '../logging';
import type { AttachmentFiles } from '../storage/attachment-files';
import { WebhookDispatcher } from '../webhooks/dispatcher';
import type { AuditLinker } from '../db/audit-linking';
import { relayOtherProcesses, type Storage } from './database';
import type { EditionPlan } from './edition';

/** What runs besides the requests: expiry, webhook deliveries, other processes' events. */
export interface BackgroundWork {
  /** Looks for due webhook deliveries now (a new endpoint's test, a test that moved the clock). */
  wakeWebhooks(): void;
  /** Runs the scheduled evaluation suites that are due now (a test that moved the clock); resolves once they have run. */
  runDueEvaluations(): Promise<void>;
  /** Looks for messages owed to Slack now (a test that moved the clock). */
  wakeChat(): void;
  /** Sockets the process may open itself at once (webhook deliveries): they share the client connections' descriptors. */
  outgoingSockets: number;
  stop(): Promise<void>;
}

export interface BackgroundWorkOptions {
  config: Config;
  edition: EditionPlan;
  storage: Storage;
  stores: { reviews: ReviewStore; attachments: AttachmentStore; webhooks: WebhookStore; slackMessages: ChatMessageStore };
  unitOfWork: UnitOfWork;
  feed: EventFeed;
  /** Which of this process's committed events owed webhook deliveries. */
  owedDeliveries: OwedDeliveries;
  outbox: Outbox;
  reviews: ReviewUseCases;
  /** What posts the messages owed to Slack (the installation's app, or the organizations' installs). */
  slack: ChatMessaging | null;
  policy: () => Policy;
  /** The hosted edition's evaluation suites, whose schedules this process helps keep. */
  evaluations?: Evaluations;
  /** The hosted edition's audit entries on PostgreSQL, chained after they commit. */
  auditLinker: AuditLinker | null;
  log: Logger;
  clock: () => number;
}

/**
 * Starts, in order: the sweep of uploads that never committed, the expiry timer (which first
 * expires what came due while the server was down), webhook deliveries, and the relay of other
 * processes' events, the scheduled evaluation suites, and the chaining of audit entries that
 * committed unchained (which first chains what a stopped process left).
 */
export async function startBackgroundWork(options: BackgroundWorkOptions): Promise<BackgroundWork> {
  const { config, storage, stores, feed, outbox, reviews, log, clock } = options;
  const exclusive = oneAtATime(storage.db);
  await exclusive.run('attachment-sweep', () => sweepAttachments(storage.files, stores.attachments, storage.db, log, clock));
  const expiry = new ReviewExpiry({ store: stores.reviews, oneAtATime: exclusive, deciding: reviews.deciding, reading: reviews.reading, feed, policy: options.policy, log, clock });
  await expiry.start();
  const dispatcher = await startWebhookDeliveries(options);
  const slack = await startSlackMessages(options);
  const relay = await relayOtherProcesses(storage.db, { url: config.database_url, outbox, feed, recheck: () => reviews.waiting.recheckWaiting(), log });
  const evaluations = options.evaluations && scheduleEvaluations(options.evaluations, exclusive, log);
  await options.auditLinker?.start();
  return {
    wakeWebhooks: () => dispatcher?.sender.wake(),
    runDueEvaluations: async () => evaluations?.runNow(),
    wakeChat: () => slack?.wake(),
    outgoingSockets: dispatcher?.inFlight ?? 0,
    stop: async () => {
      expiry.stop();
      await evaluations?.stop();
      await dispatcher?.sender.stop();
      await slack?.stop();
      await relay?.stop();
      await options.auditLinker?.stop();
    },
  };
}

/** The edition's webhook deliveries, at most as many at once as the open-file limit affords. */
async function startWebhookDeliveries(options: BackgroundWorkOptions): Promise<{ sender: WebhookDispatcher; inFlight: number } | undefined> {
  const { config, edition, stores, unitOfWork, feed, owedDeliveries, log, clock } = options;
  if (edition.webhooks === 'none') return undefined;
  if (edition.webhooks === 'installation') await stores.webhooks.syncInstallationWebhooks(config.webhooks, clock());
  const limits = { inFlight: outgoingSocketsFor(config.webhook_max_in_flight), inFlightPerOrganization: config.webhook_max_in_flight_per_organization };
  if (limits.inFlight < config.webhook_max_in_flight) {
    log.warn('webhook deliveries in flight limited by the open-file limit', { webhook_max_in_flight: config.webhook_max_in_flight, allowed: limits.inFlight });
  }
  const targets = { allowPrivate: config.webhook_allow_private_targets, allowHttp: config.webhook_allow_http };
  const sender = new WebhookDispatcher({ webhooks: stores.webhooks, unitOfWork, feed, owed: owedDeliveries, scheduleSeconds: config.webhook_retry_schedule, limits, targets, log, clock });
  await sender.start();
  return { sender, inFlight: limits.inFlight };
}

/** Messages owed to Slack, posted and kept up to date with the installation's bot token; clicks over Socket Mode. */
async function startSlackMessages(options: BackgroundWorkOptions): Promise<{ wake(): void; stop(): Promise<void> } | undefined> {
  const { slack, stores, feed, log, clock } = options;
  if (!slack) return undefined;
  const dispatcher = new ChatDispatcher({ messages: stores.slackMessages, providerFor: slack.providerFor, cardOf: slack.cardOf, feed, log, clock });
  await dispatcher.start();
  // Clicks over Socket Mode: a first connection that fails is retried in the background, never holding up the start.
  void slack.socket?.start();
  return {
    wake: () => dispatcher.wake(),
    stop: async () => {
      await slack.socket?.stop();
      await dispatcher.stop();
    },
  };
}

/**
 * Removes the files of uploads that never committed: stopped mid-upload, or moved into place
 * by a process killed before its commit. With a database other processes share, files of the
 * last minutes are spared: they may belong to another process's upload under way.
 */
async function sweepAttachments(files: AttachmentFiles, store: AttachmentStore, db: Database, log: Logger, clock: () => number): Promise<void> {
  const olderThan = db.sql.sharedByProcesses ? clock() - SHARED_SWEEP_SPARES_MS : Number.POSITIVE_INFINITY;
  const abandoned = await files.sweepIncoming(olderThan);
  if (abandoned > 0) log.info('removed unfinished uploads', { count: abandoned });
  const kept = await store.storageKeys();
  const unreferenced = await files.sweepUnreferenced((storageKey) => kept.has(storageKey), olderThan);
  if (unreferenced > 0) log.info('removed files of uploads that never committed', { count: unreferenced });
}

/** Longer than any upload may take to arrive (the request timeout), with room to spare. */
const SHARED_SWEEP_SPARES_MS = 10 * 60_000;

/**
 * How often this process looks for scheduled suites that are due. A period is a day or a week,
 * so a minute late is on time; the claim (a row lock and the next run moved on in one
 * transaction) keeps a suite to one run per period whichever process looks first.
 */
const EVALUATION_SCHEDULE_CHECK_MS = 60_000;

function scheduleEvaluations(evaluations: Evaluations, exclusive: OneAtATime, log: Logger): { runNow(): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const runNow = (): Promise<void> => {
    running = running.then(() =>
      exclusive
        .run('evaluation-schedule', async () => {
          const ran = await evaluations.runDue();
          if (ran > 0) log.info('ran scheduled evaluation suites', { count: ran });
        })
        .then(
          () => undefined,
          (error: unknown) => log.error('scheduled evaluation suites failed', { error: String(error) }),
        ),
    );
    return running;
  };
  const timer = setInterval(() => void runNow(), EVALUATION_SCHEDULE_CHECK_MS);
  timer.unref();
  return {
    runNow,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
