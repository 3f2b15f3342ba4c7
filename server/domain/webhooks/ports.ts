/** What webhook deliveries need from the world: endpoints, the delivery outbox and its claims. */

import type { Tx } from '../shared/unit-of-work';
import type { ConfiguredWebhook, WebhookDeliveryRecord, WebhookFields, WebhookRecord } from './records';

/** A delivery a dispatcher holds, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  /** Null for an endpoint of the self-hosted installation. */
  organization_id: number | null;
  message_id: string;
  payload: string;
  attempts: number;
  url: string;
  /** The secrets to sign with: the current one, and the previous one during a rotation. */
  secrets: string[];
}

/** How many more deliveries a dispatcher may send at once, and of whose. */
export interface DeliveryRoom {
  /** In all. */
  total: number;
  /** Of an organization that has none in flight here. */
  perOrganization: number;
  /** Of each organization (null: the self-hosted installation) that has some in flight here: what is left of its share. */
  organizations: ReadonlyMap<number | null, number>;
  /** Endpoints with a delivery in flight here: one at a time each. */
  busyEndpoints: readonly number[];
}

/** What one attempt came to. */
export type AttemptOutcome =
  | { kind: 'delivered'; statusCode: number; durationMs: number }
  | { kind: 'retry'; nextAttemptAt: number; statusCode: number | null; error: string; durationMs: number }
  | { kind: 'failed'; statusCode: number | null; error: string; durationMs: number };

/** An organization's webhook endpoints and their deliveries (hosted edition). */
export interface WebhookRepository {
  insert(tx: Tx, organizationId: number, fields: WebhookFields, secret: string, now: number): Promise<WebhookRecord>;
  /** How many endpoints the organization has; racing creates count one after another (its row stays locked until `tx` ends). */
  countForUpdate(tx: Tx, organizationId: number): Promise<number>;
  list(organizationId: number): Promise<WebhookRecord[]>;
  find(organizationId: number, id: number, tx?: Tx): Promise<WebhookRecord | null>;
  update(tx: Tx, organizationId: number, id: number, fields: WebhookFields, now: number): Promise<WebhookRecord | null>;
  /** Deletes the endpoint and its deliveries. */
  delete(tx: Tx, organizationId: number, id: number): Promise<boolean>;
  /** A new secret; the one before it keeps signing too until `previousUntil`. */
  rotateSecret(tx: Tx, organizationId: number, id: number, secret: string, previousUntil: number, now: number): Promise<boolean>;
  /** The active endpoints of the organization (null: the self-hosted installation's) that receive `eventType`. */
  subscribers(tx: Tx, organizationId: number | null, eventType: string): Promise<number[]>;
  /** Makes the installation's endpoints those of the `webhooks` setting: added, changed, or removed with their deliveries. */
  syncInstallationWebhooks(configured: readonly ConfiguredWebhook[], now: number): Promise<void>;
  enqueue(tx: Tx, deliveries: Array<{ webhook_id: number; message_id: string; event_type: string; payload: string }>, now: number): Promise<void>;
  /**
   * Holds due deliveries until `claimedUntil`, as many as `room` allows and no more: each the
   * next of its endpoint, none of an endpoint another process is sending to, the earliest due
   * first. Several processes never hold the same one.
   */
  claimDue(now: number, claimedUntil: number, room: DeliveryRoom): Promise<ClaimedDelivery[]>;
  /** When a delivery `room` would let through is next due (or its claim by another process runs out), or null. */
  nextDue(now: number, room: DeliveryRoom): Promise<number | null>;
  /**
   * At start: gives back the deliveries a process that died was sending, where no other can be
   * sending them (SQLite: one process owns the file). On PostgreSQL their claims run out instead.
   */
  releaseOrphanedClaims(): Promise<void>;
  recordAttempt(deliveryId: number, outcome: AttemptOutcome, now: number): Promise<void>;
  /** Stops an endpoint: inactive, with why, and its pending deliveries failed. */
  disable(tx: Tx, webhookId: number, reason: string, now: number): Promise<void>;
  /** Newest first, below the id `before`. */
  deliveries(organizationId: number, webhookId: number, before: number | null, limit: number): Promise<WebhookDeliveryRecord[]>;
  /** Sends a delivery again at once (pending, due now); false when it is not the endpoint's. */
  retry(tx: Tx, organizationId: number, webhookId: number, deliveryId: number, now: number): Promise<boolean>;
}
