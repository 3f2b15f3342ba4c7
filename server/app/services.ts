import { type Config, publicUrlOf, reviewLinkBaseOf } from '../config/settings';
import type { Database } from '../db/connection';
import type { DiskReport } from '../system/disk-space';
import { defineModels } from '../db/models';
import { Outbox } from '../db/outbox';
import { AttachmentStore } from '../db/attachment-store';
import { FeedbackStore } from '../db/feedback-store';
import { OrganizationStore } from '../db/organization-store';
import { AgentStore } from '../db/agent-store';
import { AuditStore } from '../db/audit-store';
import { PeopleStore } from '../db/people-store';
import { ReviewStore } from '../db/review-store';
import { ReviewWaitStore } from '../db/wait-store';
import { RoutingRuleStore } from '../db/routing-rule-store';
import { WorkflowStore } from '../db/workflow-store';
import { EvaluationStore } from '../db/evaluation-store';
import { WebhookStore } from '../db/webhook-store';
import { ReceiptKeyStore } from '../db/receipt-key-store';
import { DecisionReceipts } from '../domain/reviews/receipts';
import { keyEncryptionKey, ReceiptKeys } from '../receipts/keys';
import { keyEncryptionSecret } from '../receipts/key-encryption-secret';
import { ChatMessageStore } from '../db/chat-message-store';
import { SlackInstallationStore } from '../db/slack-installation-store';
import type { ChatInstallations } from '../domain/chat/installations';
import { chatEnqueuer } from '../domain/chat/messages';
import { chatInstallationsOf, hostedSlackDestinationOf, hostedSlackInbound, hostedSlackMessaging, type SlackParts, slackDestinationOf, slackParts } from './slack';
import type { SlackAnswerer } from '../integrations/slack/inbound';
import { StatisticsQuery } from '../db/statistics-query';
import { DatabaseUnitOfWork } from '../db/unit-of-work';
import { AttachmentService } from '../domain/reviews/attachments';
import { EventFeed } from '../domain/shared/events';
import { FeedbackService } from '../domain/reviews/feedback';
import { OrganizationService } from '../domain/organizations/organizations';
import { AgentService } from '../domain/organizations/agents';
import { AuditService } from '../domain/organizations/audit';
import { OrganizationRouting } from '../domain/routing/organization-rules';
import { PeopleService } from '../domain/people/people';
import { Workflows } from '../domain/workflows/workflows';
import { Evaluations } from '../domain/evaluations/evaluations';
import { OwedDeliveries, webhookEnqueuer, WebhookService } from '../domain/webhooks/webhooks';
import { Invitations, SignInService } from '../domain/people/sign-in';
import { passwordHashing, type ScryptCost } from '../domain/people/passwords';
import { type ReviewUseCases, reviewUseCases } from '../domain/reviews/use-cases';
import { StatisticsService } from '../domain/reviews/statistics';
import { DecisionWaiters } from '../domain/reviews/waiters';
import type { Policy } from '../domain/routing/review-policy';
import type { UnitOfWork } from '../domain/shared/unit-of-work';
import type { PerOrganization } from '../domain/shared/per-organization';
import { type Logger, silentLogger } from '../logging';
import type { AttachmentFiles } from '../storage/attachment-files';
import { type Storage, openStorage } from './database';
import { type EditionPlan, editionOf } from './edition';
import { type BackgroundWork, startBackgroundWork } from './maintenance';

/** The hosted edition's own use cases: organizations, people and what they configure. */
export interface HostedServices {
  organizations: OrganizationService;
  agents: AgentService;
  audit: AuditService;
  people: PeopleService;
  signIn: SignInService;
  routing: OrganizationRouting;
  workflows: Workflows;
  evaluations: Evaluations;
  webhooks: WebhookService;
  /** Organizations' Slack workspaces, installed with OAuth. */
  chatInstallations: ChatInstallations;
}

/** Everything behind the HTTP layer, wired to one database. Known to `app/` alone: others get a handle. */
export interface Services {
  edition: EditionPlan;
  db: Database;
  /** Committed events, in the order they reached this process. */
  feed: EventFeed;
  outbox: Outbox;
  waiters: DecisionWaiters;
  reviews: ReviewUseCases;
  feedback: FeedbackService;
  attachments: AttachmentService;
  files: AttachmentFiles;
  statistics: StatisticsService;
  hosted: HostedServices;
  /** The receipt signing keys: /.well-known/jwks.json lists their public halves. */
  receiptKeys: ReceiptKeys;
  /** The self-hosted installation's Slack app, when set up. */
  slack: SlackParts | null;
  /** What answers Slack's clicks: the installation's app, or (hosted) the organizations' installs. */
  slackInbound: SlackAnswerer | null;
  background: BackgroundWork;
  disk(): Promise<DiskReport>;
  /** Puts a reloaded policy in force for new reviews and the next expiries; waiting agents are untouched. */
  replacePolicy(policy: Policy): void;
  /** Stops background work and closes the database. */
  close(): Promise<void>;
}

/** What the services take besides the configuration: tests set them. */
export interface ServiceOptions {
  clock?: () => number;
  /** scrypt's cost for new passwords and for the timing of unknown e-mails (default PASSWORD_COST). */
  passwordCost?: ScryptCost;
  /** Draws auto-decide rules' audit samples, uniform on [0, 1) (default Math.random); tests seed it. */
  random?: () => number;
}

/** The repositories over one database. */
function storesOn(db: Database, config: Config, clock: () => number, log: Logger) {
  const models = defineModels(db.sequelize);
  const dashboardUrl = reviewLinkBaseOf(config);
  return {
    reviews: new ReviewStore(db, models, dashboardUrl, clock, editionOf(config).webhooks === 'organizations'),
    waits: new ReviewWaitStore(db),
    feedback: new FeedbackStore(models),
    attachments: new AttachmentStore(models),
    statistics: new StatisticsQuery(db.sequelize),
    organizations: new OrganizationStore(db),
    agents: new AgentStore(db),
    people: new PeopleStore(db),
    audit: new AuditStore(db, dashboardUrl, log),
    routingRules: new RoutingRuleStore(db),
    workflows: new WorkflowStore(db),
    evaluations: new EvaluationStore(db),
    webhooks: new WebhookStore(db),
    receiptKeys: new ReceiptKeyStore(db),
    slackMessages: new ChatMessageStore(db, 'slack'),
    slackInstallations: new SlackInstallationStore(db),
  };
}

type Stores = ReturnType<typeof storesOn>;

/**
 * How changes are written: each in one transaction with the events it records (the outbox), and
 * in the edition's audit log and webhook deliveries.
 */
function writesOn(
  db: Database,
  stores: Stores,
  config: Config,
  policy: () => Policy,
  clock: () => number,
  log: Logger,
): { feed: EventFeed; outbox: Outbox; unitOfWork: UnitOfWork; owedDeliveries: OwedDeliveries } {
  const edition = editionOf(config);
  const slackDestination = slackDestinationOf(config, policy) ?? hostedSlackDestinationOf(config, stores.slackInstallations, stores.routingRules);
  const feed = new EventFeed((event, error) => log.error('event listener failed', { event: event.type, error: String(error) }));
  const outbox = new Outbox(db, clock);
  const owedDeliveries = new OwedDeliveries();
  const unitOfWork = new DatabaseUnitOfWork(db, outbox, feed, {
    auditLog: edition.organizations ? stores.audit : undefined,
    webhooks:
      edition.webhooks === 'none' ? undefined : { enqueuer: webhookEnqueuer(stores.webhooks, clock, edition.webhooks === 'installation', owedDeliveries), inserts: stores.webhooks },
    chat: slackDestination === null ? undefined : chatEnqueuer(stores.slackMessages, slackDestination, clock),
    clock,
  });
  return { feed, outbox, unitOfWork, owedDeliveries };
}

/** The review policy in force, which a reload replaces. */
function policyHolder(initial: Policy): { current: () => Policy; replace: (policy: Policy) => void } {
  let policy = initial;
  return { current: () => policy, replace: (next) => void (policy = next) };
}

/** The services of the API, composed in steps: storage, repositories, writes, use cases, background work. */
export async function openServices(config: Config, log: Logger, { clock = Date.now, passwordCost, random }: ServiceOptions = {}): Promise<Services> {
  const edition = editionOf(config);
  const storage = await openStorage(config, log, clock);
  const { db } = storage;
  const stores = storesOn(db, config, clock, log);
  // Waits a killed process left behind would otherwise show until their time ran out.
  await stores.waits.clearStale(clock());
  const receiptKeys = await openReceiptKeys(config, stores.receiptKeys, clock).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const policy = policyHolder(config.routing);
  const { feed, outbox, unitOfWork, owedDeliveries } = writesOn(db, stores, config, policy.current, clock, log);
  const waiters = new DecisionWaiters(feed);
  const hosted = hostedServices(config, stores, unitOfWork, clock, passwordCost, () => background.wakeWebhooks(), random, log);
  forgetOnChange(feed, [hosted.routing.kept, hosted.workflows.kept]);
  forgetKeysOnRevocation(feed, hosted.organizations);
  const attachments = attachmentService(config, storage, stores, unitOfWork, clock);
  const reviews = reviewUseCases({
    reviews: stores.reviews,
    people: stores.people,
    // The hosted edition's organizations route by their own rules first, and run their workflows.
    organizationRouting: edition.organizations ? hosted.routing : undefined,
    workflows: edition.organizations ? hosted.workflows : undefined,
    receipts: new DecisionReceipts({ signer: receiptKeys, reviews: stores.reviews, issuer: publicUrlOf(config), ttlSeconds: config.receipt_ttl_seconds }),
    unitOfWork,
    waiters,
    waits: stores.waits,
    log,
    policy: policy.current,
    maxWaiting: config.max_waiting_requests,
    refuseHiddenCharacters: config.refuse_hidden_characters,
    attachments,
    clock,
  });
  const slack = slackParts(config, stores, reviews, log);
  const messaging = slack ?? hostedSlackMessaging(config, stores, reviews, hosted.chatInstallations);
  const background = await startBackgroundWork({
    config,
    edition,
    storage,
    stores,
    unitOfWork,
    feed,
    owedDeliveries,
    outbox,
    reviews,
    slack: messaging,
    policy: policy.current,
    evaluations: edition.organizations ? hosted.evaluations : undefined,
    auditLinker: edition.organizations ? stores.audit.linker : null,
    log,
    clock,
  });
  return {
    edition,
    db,
    feed,
    outbox,
    waiters,
    reviews,
    feedback: new FeedbackService(stores.feedback, stores.reviews, unitOfWork, clock),
    attachments,
    files: storage.files,
    statistics: new StatisticsService(stores.statistics, clock),
    hosted,
    receiptKeys,
    slack,
    slackInbound: slack?.inbound ?? hostedSlackInbound(config, stores, reviews, hosted.chatInstallations, log),
    background,
    disk: () => storage.diskSpace.report(),
    replacePolicy: policy.replace,
    close: async () => {
      // Its waiters have been answered (shutdown); other processes must not show them as waiting.
      await stores.waits.endAllOfThisProcess().catch((error: unknown) => log.error('could not remove the waits of this process', { error: String(error) }));
      await background.stop();
      await db.close();
    },
  };
}

/**
 * What this process keeps of each organization's rules and workflows is forgotten once a change
 * to the organization is published here (its own commits, and, through the relay, those of other
 * processes on PostgreSQL), and nothing is kept while the relay may miss changes.
 */
function forgetOnChange(feed: EventFeed, kept: ReadonlyArray<Pick<PerOrganization<unknown>, 'forget' | 'forgetAll'>>): void {
  feed.onOrganizationChange(({ organization_id }) => {
    for (const entries of kept) entries.forget(organization_id);
  });
  feed.onHearing((hearsEverything) => {
    for (const entries of kept) entries.forgetAll(hearsEverything);
  });
}

/**
 * The organization keys this process keeps are forgotten once a key is revoked — by this process
 * before its revocation answers, by others through the relay — and none is kept while the relay
 * may miss a revocation.
 */
function forgetKeysOnRevocation(feed: EventFeed, organizations: OrganizationService): void {
  feed.onRevocation(({ principal_id }) => organizations.forgetKeysOnRevocation(principal_id));
  feed.onHearing((hearsEverything) => organizations.keepKeysWhile(hearsEverything));
}

/** The receipt signing keys under this process's key-encryption key (the setting, or the secret kept in data_dir). */
export function receiptKeysFor(config: Config, rows: ReceiptKeyStore, clock: () => number): ReceiptKeys {
  return new ReceiptKeys(rows, keyEncryptionKey(keyEncryptionSecret(config.receipt_key_encryption_key, config.data_dir)), clock);
}

/** The receipt signing keys, with a current one made at the installation's first start, and checked to decrypt. */
async function openReceiptKeys(config: Config, rows: ReceiptKeyStore, clock: () => number): Promise<ReceiptKeys> {
  const keys = receiptKeysFor(config, rows, clock);
  await keys.ensureCurrent();
  return keys;
}

function attachmentService(config: Config, storage: Storage, stores: Stores, unitOfWork: UnitOfWork, clock: () => number): AttachmentService {
  return new AttachmentService({
    attachments: stores.attachments,
    reviews: stores.reviews,
    files: storage.files,
    unitOfWork,
    limits: { maxBytes: config.max_attachment_bytes, maxPerReview: config.max_attachments_per_review },
    refuseHiddenCharacters: config.refuse_hidden_characters,
    clock,
  });
}

/** The hosted edition's use cases. Built in either edition: the self-hosted one serves none of them. */
export function hostedServices(
  config: Config,
  stores: Pick<Stores, 'organizations' | 'agents' | 'audit' | 'people' | 'routingRules' | 'workflows' | 'evaluations' | 'webhooks' | 'slackInstallations'>,
  unitOfWork: UnitOfWork,
  clock: () => number,
  passwordCost: ScryptCost | undefined,
  wakeWebhooks: () => void,
  random?: () => number,
  log: Logger = silentLogger,
): HostedServices {
  const webhookTargets = { allowPrivate: config.webhook_allow_private_targets, allowHttp: config.webhook_allow_http };
  return {
    organizations: new OrganizationService({ organizations: stores.organizations, agents: stores.agents, unitOfWork, clock }),
    agents: new AgentService(stores.agents, unitOfWork, clock),
    audit: new AuditService(stores.audit),
    people: new PeopleService(stores.people, stores.people, new Invitations(stores.people, publicUrlOf(config), clock), unitOfWork, clock),
    signIn: new SignInService(stores.people, unitOfWork, clock, passwordHashing(passwordCost)),
    routing: new OrganizationRouting(stores.routingRules, stores.people, unitOfWork, clock, random),
    workflows: new Workflows(stores.workflows, stores.organizations, stores.people, unitOfWork, clock),
    evaluations: new Evaluations(stores.evaluations, stores.evaluations, unitOfWork, clock),
    webhooks: new WebhookService(stores.webhooks, unitOfWork, webhookTargets, config.max_webhooks_per_organization, clock, wakeWebhooks),
    chatInstallations: chatInstallationsOf(config, stores.slackInstallations, unitOfWork, clock, log),
  };
}

export type { Stores };
