import { randomUUID } from 'node:crypto';
import { AppError, invalidInput, notFound, refuseNul } from '../shared/errors';
import type { DomainEvent, PublishedEvent } from '../shared/events';
import type { Clock, Tx, UnitOfWork } from '../shared/unit-of-work';
import type { Principal } from '../shared/principal';
import type { WebhookFields } from './records';
import type { WebhookRepository } from './ports';
import type { WebhookDeliveryRecord, WebhookRecord } from './records';
import { organizationOf, organizationOfCaller } from '../shared/scope';
import { newWebhookSecret } from './signing';
import { checkUrl, type TargetPolicy } from './targets';

/** The events an endpoint may receive: those of `/events`, with an expiry told apart from a person's decision. */
export const WEBHOOK_EVENTS = ['review.created', 'review.decided', 'review.expired', 'review.vote', 'feedback.created', 'attachment.created', 'attachment.deleted'] as const;

/** How long the secret before a rotation keeps signing, beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The reviewer an expiry decides as (`ReviewExpiry`). */
const EXPIRY_REVIEWER = 'policy:expired';

export interface WebhookInput {
  url: string;
  events?: string[];
  description?: string | null;
  is_active?: boolean;
  organization_id?: number | null;
}

export type WebhookChanges = Partial<Omit<WebhookInput, 'organization_id'>>;

/** The webhook type of an event: an expiry's decision is `review.expired`. */
function webhookTypeOf(event: DomainEvent): string {
  if (event.type === 'review.decided' && event.payload.decision?.reviewer_name === EXPIRY_REVIEWER) return 'review.expired';
  return event.type;
}

/** A webhook's body, `{type, timestamp, data}`, as the text around its data: the record `/events` carries. */
function bodyAround(type: string, now: number): { before: string; after: string } {
  return { before: `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(new Date(now).toISOString())},"data":`, after: '}' };
}

function body(type: string, now: number, data: object): string {
  const { before, after } = bodyAround(type, now);
  return `${before}${JSON.stringify(data)}${after}`;
}

/**
 * The events of this process whose transaction wrote webhook deliveries: once such an event is
 * published, its transaction has committed and the dispatcher looks for due deliveries. After
 * any other commit it does not: most changes (every create of an organization without
 * webhooks) owe none, and looking cost two queries each. Held weakly: the events of a
 * transaction that rolled back are simply forgotten.
 */
export class OwedDeliveries {
  private readonly events = new WeakSet<PublishedEvent>();

  mark(event: PublishedEvent): void {
    this.events.add(event);
  }

  owedBy(event: PublishedEvent): boolean {
    return this.events.has(event);
  }
}

/** Where one event's deliveries go: to each active endpoint of `owner` (null: the installation) that takes `type`. */
export interface DeliveryAddress {
  owner: number | null;
  type: string;
}

/**
 * One event's deliveries as the statement that stores the event can write them, to each endpoint
 * at the address: the message id is `messagePrefix` and the event's id, the body the event's
 * payload between `bodyBefore` and `bodyAfter`.
 */
export interface DeliveriesOfEntry extends DeliveryAddress {
  messagePrefix: string;
  bodyBefore: string;
  bodyAfter: string;
  now: number;
}

/** The deliveries committed events owe the endpoints of their organizations, written in the transaction of the change. */
export interface WebhookEnqueuer {
  /** The deliveries `event` may owe, for the statement that stores it to write; null when it owes none (no owner to have endpoints, or a type none may take). */
  deliveriesOf(event: DomainEvent): DeliveriesOfEntry | null;
  /** Told that the statement which stored `event` wrote deliveries for it. */
  delivered(event: PublishedEvent): void;
  /** Writes the deliveries `events` owe, looking up the endpoints that take each. */
  enqueue(tx: Tx, events: readonly PublishedEvent[]): Promise<void>;
}

/** A delivery's message id is this and its event's id: one per event, whichever endpoints it goes to (receivers deduplicate on it). */
export const MESSAGE_ID_PREFIX = 'msg_';

function messageIdOf(eventId: number): string {
  return `${MESSAGE_ID_PREFIX}${eventId}`;
}

/**
 * `installation`: the self-hosted edition, whose endpoints (from the `webhooks` setting) receive
 * every event, whatever `organization_id` label it carries; otherwise each organization's own.
 */
export function webhookEnqueuer(webhooks: WebhookRepository, clock: Clock, installation: boolean, owed: OwedDeliveries): WebhookEnqueuer {
  const addressOf = (event: DomainEvent): DeliveryAddress | null => {
    const owner = installation ? null : event.organization_id;
    if (!installation && owner === null) return null;
    const type = webhookTypeOf(event);
    // An agent's wait (`review.waiting`) is no webhook event: it would only be looked up for nobody.
    if (!(WEBHOOK_EVENTS as readonly string[]).includes(type)) return null;
    return { owner, type };
  };
  return {
    deliveriesOf(event) {
      const address = addressOf(event);
      if (!address) return null;
      const now = clock();
      const { before, after } = bodyAround(address.type, now);
      return { owner: address.owner, type: address.type, messagePrefix: MESSAGE_ID_PREFIX, bodyBefore: before, bodyAfter: after, now };
    },
    delivered: (event) => owed.mark(event),
    async enqueue(tx, events) {
      const now = clock();
      for (const event of events) {
        const address = addressOf(event);
        if (!address) continue;
        const subscribers = await webhooks.subscribers(tx, address.owner, address.type);
        if (subscribers.length === 0) continue;
        // The body only once someone takes the event: most events of most changes go to nobody.
        const payload = body(address.type, now, event.payload);
        await webhooks.enqueue(
          tx,
          subscribers.map((webhookId) => ({ webhook_id: webhookId, message_id: messageIdOf(event.id), event_type: address.type, payload })),
          now,
        );
        owed.mark(event);
      }
    },
  };
}

/**
 * An organization's webhook endpoints (hosted edition), and the deliveries its changes owe
 * them, written in the transaction of the change. Sending is the dispatcher's.
 */
export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly targets: TargetPolicy,
    /** Endpoints one organization may have (`max_webhooks_per_organization`): each may hold a socket at every event. */
    private readonly maxEndpoints: number,
    private readonly clock: Clock,
    /** Tells this process's dispatcher of a delivery queued without an event (a test, a retry). */
    private readonly queued: () => void = () => {},
  ) {}

  async create(principal: Principal, input: WebhookInput): Promise<WebhookRecord & { secret: string }> {
    refuseNul(input);
    const organizationId = organizationOf(principal.scope, input.organization_id) ?? organizationOfCaller(principal);
    const fields = this.checked({ url: input.url.trim(), events: input.events ?? [...WEBHOOK_EVENTS], description: input.description ?? null, is_active: input.is_active ?? true });
    const secret = newWebhookSecret();
    return this.unitOfWork.run(async (tx) => {
      if ((await this.webhooks.countForUpdate(tx, organizationId)) >= this.maxEndpoints) {
        throw new AppError(409, `the organization already has the maximum of ${this.maxEndpoints} webhook endpoints (max_webhooks_per_organization); delete one first`);
      }
      const created = await this.webhooks.insert(tx, organizationId, fields, secret, this.clock());
      tx.audit({ organization_id: organizationId, action: 'webhook.created', target_type: 'webhook', target_id: created.id, data: { url: created.url, events: created.events } });
      return { ...created, secret };
    }, { by: principal });
  }

  async list(principal: Principal): Promise<{ webhooks: WebhookRecord[]; count: number }> {
    const webhooks = await this.webhooks.list(organizationOfCaller(principal));
    return { webhooks, count: webhooks.length };
  }

  async get(principal: Principal, id: number): Promise<WebhookRecord> {
    const webhook = await this.webhooks.find(organizationOfCaller(principal), id);
    if (!webhook) throw notFound('webhook', id);
    return webhook;
  }

  async update(principal: Principal, id: number, changes: WebhookChanges): Promise<WebhookRecord> {
    refuseNul(changes);
    const organizationId = organizationOfCaller(principal);
    return this.unitOfWork.run(async (tx) => {
      const current = await this.webhooks.find(organizationId, id, tx);
      if (!current) throw notFound('webhook', id);
      const fields = this.checked({
        url: changes.url?.trim() ?? current.url,
        events: changes.events ?? current.events,
        description: changes.description === undefined ? current.description : changes.description,
        is_active: changes.is_active ?? current.is_active,
      });
      const updated = (await this.webhooks.update(tx, organizationId, id, fields, this.clock())) as WebhookRecord;
      tx.audit({ organization_id: organizationId, action: 'webhook.updated', target_type: 'webhook', target_id: id, data: { changed: Object.keys(changes) } });
      return updated;
    }, { by: principal });
  }

  async delete(principal: Principal, id: number): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.webhooks.delete(tx, organizationId, id))) throw notFound('webhook', id);
      tx.audit({ organization_id: organizationId, action: 'webhook.deleted', target_type: 'webhook', target_id: id, data: {} });
    }, { by: principal });
  }

  /** A new secret, shown this once; for a day the old one signs too, so receivers can switch without losing a delivery. */
  async rotateSecret(principal: Principal, id: number): Promise<{ secret: string; previous_secret_expires_at: string }> {
    const organizationId = organizationOfCaller(principal);
    const secret = newWebhookSecret();
    const previousUntil = this.clock() + ROTATION_OVERLAP_MS;
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.webhooks.rotateSecret(tx, organizationId, id, secret, previousUntil, this.clock()))) throw notFound('webhook', id);
      tx.audit({ organization_id: organizationId, action: 'webhook.secret_rotated', target_type: 'webhook', target_id: id, data: {} });
    }, { by: principal });
    return { secret, previous_secret_expires_at: new Date(previousUntil).toISOString() };
  }

  async deliveries(principal: Principal, id: number, before: number | null, limit: number): Promise<{ deliveries: WebhookDeliveryRecord[]; next_cursor: number | null }> {
    const organizationId = organizationOfCaller(principal);
    if (!(await this.webhooks.find(organizationId, id))) throw notFound('webhook', id);
    const page = await this.webhooks.deliveries(organizationId, id, before, limit + 1);
    const deliveries = page.slice(0, limit);
    return { deliveries, next_cursor: page.length > limit ? deliveries[deliveries.length - 1].id : null };
  }

  /** Sends a delivery again at once, whatever became of it. */
  async retry(principal: Principal, id: number, deliveryId: number): Promise<void> {
    const organizationId = organizationOfCaller(principal);
    await this.unitOfWork.run(async (tx) => {
      if (!(await this.webhooks.find(organizationId, id, tx))) throw notFound('webhook', id);
      if (!(await this.webhooks.retry(tx, organizationId, id, deliveryId, this.clock()))) throw notFound('delivery', deliveryId);
    }, { by: principal });
    this.queued();
  }

  /** A `webhook.test` event to this endpoint alone, to check it receives and verifies. */
  async sendTest(principal: Principal, id: number): Promise<{ message_id: string }> {
    const organizationId = organizationOfCaller(principal);
    const messageId = `msg_test_${randomUUID()}`;
    await this.unitOfWork.run(async (tx) => {
      const webhook = await this.webhooks.find(organizationId, id, tx);
      if (!webhook) throw notFound('webhook', id);
      if (!webhook.is_active) throw new AppError(409, `webhook ${id} is disabled${webhook.disabled_reason ? ` (${webhook.disabled_reason})` : ''}; PATCH is_active: true first`);
      const now = this.clock();
      await this.webhooks.enqueue(tx, [{ webhook_id: id, message_id: messageId, event_type: 'webhook.test', payload: body('webhook.test', now, { webhook_id: id }) }], now);
    }, { by: principal });
    this.queued();
    return { message_id: messageId };
  }

  private checked(fields: WebhookFields): WebhookFields {
    const problem = checkUrl(fields.url, this.targets);
    if (problem) throw invalidInput('url', problem);
    const unknown = fields.events.find((type) => !(WEBHOOK_EVENTS as readonly string[]).includes(type));
    if (unknown) throw invalidInput('events', `unknown event type ${unknown} (use ${WEBHOOK_EVENTS.join(', ')})`);
    return { ...fields, events: [...new Set(fields.events)] };
  }
}
