import { QueryTypes } from 'sequelize';
import type { Database, Statement } from './database';
import { organizationRows } from './organization-rows';
import { isoTime } from './time';
import { transactionOf } from './unit-of-work';
import type { AttemptOutcome, ClaimedDelivery, DeliveryRoom, WebhookRepository } from '../domain/webhooks/ports';
import type { ConfiguredWebhook, WebhookFields } from '../domain/webhooks/records';
import type { Tx } from '../domain/shared/unit-of-work';
import type { DeliveriesOfEntry } from '../domain/webhooks/webhooks';
import type { WebhookDeliveryRecord, WebhookRecord } from '../domain/webhooks/records';

interface WebhookRow {
  id: number;
  organization_id: number;
  url: string;
  events: string;
  description: string | null;
  is_active: boolean | number;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

interface DeliveryRow {
  id: number;
  webhook_id: number;
  message_id: string;
  event_type: string;
  status: WebhookDeliveryRecord['status'];
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: number;
}

/** `WebhookStore.deliveriesFromEntry`'s insert, for the endpoints of one owner. */
function deliveriesFromEntrySql(owner: string): string {
  return `INSERT INTO webhook_deliveries (webhook_id, message_id, event_type, payload, status, attempts, next_attempt_at, created_at)
          SELECT webhooks.id, $webhook_message_prefix::text || entry.id, $webhook_type::text, $webhook_body_before::text || $payload || $webhook_body_after::text, 'pending', 0, $webhook_now::bigint, $webhook_now::bigint
          FROM webhooks, entry WHERE ${owner} AND is_active AND events::jsonb ? $webhook_type::text ORDER BY webhooks.id`;
}

/**
 * Whether the organization `$organization_id` has an endpoint that could be owed an event: read
 * ahead of a create on PostgreSQL (`ReviewStore`), so that where it has none the create's
 * statement looks none up (`withoutEndpoints`).
 */
export const ACTIVE_ENDPOINT_EXISTS = 'EXISTS (SELECT 1 FROM webhooks WHERE webhooks.organization_id = $organization_id AND webhooks.is_active)';

const INSTALLATION_DELIVERIES_FROM_ENTRY = deliveriesFromEntrySql('organization_id IS NULL');
const ORGANIZATION_DELIVERIES_FROM_ENTRY = deliveriesFromEntrySql('organization_id = $webhook_owner');

/** A claimed delivery as read, its endpoint's secrets not yet sorted out. */
type ClaimedRow = Omit<ClaimedDelivery, 'secrets'> & { secret: string; previous_secret: string | null; previous_secret_until: number | null };

const COLUMNS = 'id, organization_id, url, events, description, is_active, disabled_reason, created_at, updated_at';
const DELIVERY_COLUMNS = 'd.id, d.webhook_id, d.message_id, d.event_type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.duration_ms, d.created_at';
/** The longest error text kept with an attempt. */
const MAX_ERROR = 500;

/**
 * The next delivery of every endpoint (the `webhook_deliveries_queue` index finds each), with its
 * endpoint's organization: one at a time per endpoint, so only these can go out now.
 */
const HEADS_OF_QUEUES = `
  SELECT d.id, d.next_attempt_at, d.claimed_until, d.webhook_id, w.organization_id
  FROM webhooks w JOIN webhook_deliveries d ON d.id = (
    SELECT head.id FROM webhook_deliveries head WHERE head.webhook_id = w.id AND head.status = 'pending'
    ORDER BY head.next_attempt_at, head.id LIMIT 1)`;

/** SQL conditions that leave out the endpoints and the organizations `room` has no place for; their values are numbers, written in. */
function roomConditions(room: DeliveryRoom): string[] {
  const full = [...room.organizations].filter(([, left]) => left <= 0).map(([organizationId]) => organizationId);
  const fullOrganizations = full.filter((id) => id !== null).map(Number);
  return [
    room.busyEndpoints.length > 0 ? `webhook_id NOT IN (${room.busyEndpoints.map(Number).join(', ')})` : '',
    full.includes(null) ? 'organization_id IS NOT NULL' : '',
    fullOrganizations.length > 0 ? `(organization_id IS NULL OR organization_id NOT IN (${fullOrganizations.join(', ')}))` : '',
  ].filter(Boolean);
}

/** How many more of its deliveries each organization may have sent now, as SQL over `organization_id`. */
function shareLeft(room: DeliveryRoom): string {
  const cases = [...room.organizations].map(([organizationId, left]) =>
    organizationId === null ? `WHEN organization_id IS NULL THEN ${Number(left)}` : `WHEN organization_id = ${Number(organizationId)} THEN ${Number(left)}`,
  );
  return cases.length > 0 ? `CASE ${cases.join(' ')} ELSE ${Number(room.perOrganization)} END` : String(Number(room.perOrganization));
}

const timeOrNull = (value: number | null): string | null => (value === null ? null : isoTime(Number(value)));
const numberOrNull = (value: number | null): number | null => (value === null ? null : Number(value));

function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    // SQLite keeps booleans as 0 and 1.
    is_active: Boolean(row.is_active),
    disabled_reason: row.disabled_reason,
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}

function toDelivery(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: Number(row.id),
    webhook_id: Number(row.webhook_id),
    message_id: row.message_id,
    event_type: row.event_type,
    status: row.status,
    attempts: Number(row.attempts),
    next_attempt_at: timeOrNull(row.next_attempt_at),
    last_attempt_at: timeOrNull(row.last_attempt_at),
    last_status_code: numberOrNull(row.last_status_code),
    last_error: row.last_error,
    duration_ms: numberOrNull(row.duration_ms),
    created_at: isoTime(Number(row.created_at)),
  };
}

export class WebhookStore implements WebhookRepository {
  constructor(private readonly db: Database) {}

  async insert(tx: Tx, organizationId: number, fields: WebhookFields, secret: string, now: number): Promise<WebhookRecord> {
    const row = { ...fields, events: JSON.stringify(fields.events), organization_id: organizationId, secret, created_at: now, updated_at: now };
    const id = await this.db.insertReturningId(
      `INSERT INTO webhooks (organization_id, url, events, description, secret, is_active, created_at, updated_at)
       VALUES ($organization_id, $url, $events, $description, $secret, $is_active, $created_at, $updated_at)`,
      row,
      transactionOf(tx),
    );
    return toWebhook({ ...row, id, disabled_reason: null });
  }

  async countForUpdate(tx: Tx, organizationId: number): Promise<number> {
    const transaction = transactionOf(tx);
    // NO KEY UPDATE, as the audit log's: the insert's foreign key takes KEY SHARE on the same row.
    const lock = this.db.sql.lockRows('no key update');
    if (lock) await this.db.sequelize.query(`SELECT id FROM organizations WHERE id = $organizationId${lock}`, { bind: { organizationId }, transaction });
    const [row] = await this.db.sequelize.query<{ count: number | string }>('SELECT COUNT(*) AS count FROM webhooks WHERE organization_id = $organizationId', {
      bind: { organizationId },
      type: QueryTypes.SELECT,
      transaction,
    });
    return Number(row?.count ?? 0);
  }

  async list(organizationId: number): Promise<WebhookRecord[]> {
    return (await organizationRows<WebhookRow>(this.db, 'webhooks', COLUMNS, organizationId)).map(toWebhook);
  }

  async find(organizationId: number, id: number, tx?: Tx): Promise<WebhookRecord | null> {
    const [row] = await organizationRows<WebhookRow>(this.db, 'webhooks', COLUMNS, organizationId, id, tx);
    return row ? toWebhook(row) : null;
  }

  async update(tx: Tx, organizationId: number, id: number, fields: WebhookFields, now: number): Promise<WebhookRecord | null> {
    if (!(await this.find(organizationId, id, tx))) return null;
    // Turning an endpoint back on clears why it was off.
    await this.db.sequelize.query(
      `UPDATE webhooks SET url = $url, events = $events, description = $description, is_active = $is_active,
       disabled_reason = CASE WHEN $is_active THEN NULL ELSE disabled_reason END, updated_at = $now WHERE id = $id`,
      { bind: { ...fields, events: JSON.stringify(fields.events), id, now }, transaction: transactionOf(tx) },
    );
    return this.find(organizationId, id, tx);
  }

  async delete(tx: Tx, organizationId: number, id: number): Promise<boolean> {
    if (!(await this.find(organizationId, id, tx))) return false;
    const transaction = transactionOf(tx);
    await this.db.sequelize.query('DELETE FROM webhook_deliveries WHERE webhook_id = $id', { bind: { id }, transaction });
    await this.db.sequelize.query('DELETE FROM webhooks WHERE id = $id', { bind: { id }, transaction });
    return true;
  }

  async rotateSecret(tx: Tx, organizationId: number, id: number, secret: string, previousUntil: number, now: number): Promise<boolean> {
    if (!(await this.find(organizationId, id, tx))) return false;
    await this.db.sequelize.query(
      'UPDATE webhooks SET previous_secret = secret, previous_secret_until = $previousUntil, secret = $secret, updated_at = $now WHERE id = $id',
      { bind: { id, secret, previousUntil, now }, transaction: transactionOf(tx) },
    );
    return true;
  }

  async subscribers(tx: Tx, organizationId: number | null, eventType: string): Promise<number[]> {
    const owner = organizationId === null ? 'organization_id IS NULL' : 'organization_id = $organizationId';
    const rows = await this.db.selectRows<{ id: number; events: string }>(
      `SELECT id, events FROM webhooks WHERE ${owner} AND is_active = $active`,
      organizationId === null ? { active: true } : { organizationId, active: true },
      transactionOf(tx),
    );
    return rows.filter((row) => (JSON.parse(row.events) as string[]).includes(eventType)).map((row) => Number(row.id));
  }

  /**
   * PostgreSQL: the deliveries one event owes, as an insert for the statement that writes the
   * event to the outbox to send too (`Outbox.write`), reading the stored entry's id and payload
   * there: no round trip to learn that nobody takes the event, as nobody does for most creates,
   * and none to write the deliveries when someone does. The body is put together by the database
   * around the payload the statement already sends, and only for an endpoint that takes the
   * event. SQLite's transactions look theirs up and write them apart.
   */
  deliveriesFromEntry({ owner, type, messagePrefix, bodyBefore, bodyAfter, now }: DeliveriesOfEntry): Statement {
    // The installation's endpoints are those without an owner; the parameter goes unused there.
    return {
      sql: owner === null ? INSTALLATION_DELIVERIES_FROM_ENTRY : ORGANIZATION_DELIVERIES_FROM_ENTRY,
      bind: { webhook_owner: owner, webhook_type: type, webhook_message_prefix: messagePrefix, webhook_body_before: bodyBefore, webhook_body_after: bodyAfter, webhook_now: now },
    };
  }

  async syncInstallationWebhooks(configured: readonly ConfiguredWebhook[], now: number): Promise<void> {
    await this.db.write(async (transaction) => {
      const rows = await this.db.sequelize.query<{ id: number; url: string }>('SELECT id, url FROM webhooks WHERE organization_id IS NULL', { type: QueryTypes.SELECT, transaction });
      const wanted = new Map(configured.map((webhook) => [webhook.url, webhook]));
      for (const row of rows) {
        const webhook = wanted.get(row.url);
        if (!webhook) {
          await this.db.sequelize.query('DELETE FROM webhook_deliveries WHERE webhook_id = $id', { bind: { id: row.id }, transaction });
          await this.db.sequelize.query('DELETE FROM webhooks WHERE id = $id', { bind: { id: row.id }, transaction });
          continue;
        }
        wanted.delete(row.url);
        await this.db.sequelize.query('UPDATE webhooks SET secret = $secret, events = $events, is_active = $active, disabled_reason = NULL, updated_at = $now WHERE id = $id', {
          bind: { id: row.id, secret: webhook.secret, events: JSON.stringify(webhook.events), active: true, now },
          transaction,
        });
      }
      for (const webhook of wanted.values()) {
        await this.db.sequelize.query(
          `INSERT INTO webhooks (organization_id, url, events, description, secret, is_active, created_at, updated_at)
           VALUES (NULL, $url, $events, $description, $secret, $active, $now, $now)`,
          { bind: { url: webhook.url, events: JSON.stringify(webhook.events), description: 'from greenlight.yaml', secret: webhook.secret, active: true, now }, transaction },
        );
      }
    });
  }

  async enqueue(tx: Tx, deliveries: Array<{ webhook_id: number; message_id: string; event_type: string; payload: string }>, now: number): Promise<void> {
    for (const delivery of deliveries) {
      await this.db.sequelize.query(
        `INSERT INTO webhook_deliveries (webhook_id, message_id, event_type, payload, status, attempts, next_attempt_at, created_at)
         VALUES ($webhook_id, $message_id, $event_type, $payload, 'pending', 0, $now, $now)`,
        { bind: { ...delivery, now }, transaction: transactionOf(tx) },
      );
    }
  }

  async claimDue(now: number, claimedUntil: number, room: DeliveryRoom): Promise<ClaimedDelivery[]> {
    if (room.total <= 0) return [];
    // Chosen by a read, outside the write that claims them: looking at every endpoint's queue takes
    // a while with many endpoints, and SQLite's other writes would wait for it. The earliest due
    // first, each organization up to what is left of its share, `total` in all.
    const chosen = await this.db.sequelize.query<{ id: number }>(
      `SELECT id FROM (
         SELECT id, next_attempt_at, organization_id,
           ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY next_attempt_at, id) AS place
         FROM (${HEADS_OF_QUEUES}) heads
         WHERE ${['next_attempt_at <= $now', '(claimed_until IS NULL OR claimed_until < $now)', ...roomConditions(room)].join(' AND ')}
       ) due
       WHERE place <= ${shareLeft(room)}
       ORDER BY next_attempt_at, id LIMIT $total`,
      { bind: { now, total: room.total }, type: QueryTypes.SELECT },
    );
    if (chosen.length === 0) return [];
    // Claimed only as they still are: another process may have claimed, sent or rescheduled one
    // since (PostgreSQL: one it is claiming right now is skipped rather than waited for).
    const { skipLocked } = this.db.sql;
    const claimed = await this.db.write((transaction) =>
      this.db.sequelize.query<{ id: number }>(
        `UPDATE webhook_deliveries SET claimed_until = $claimedUntil WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE id IN (${chosen.map((row) => Number(row.id)).join(', ')})
             AND status = 'pending' AND next_attempt_at <= $now AND (claimed_until IS NULL OR claimed_until < $now) ${skipLocked})
         RETURNING id`,
        { bind: { now, claimedUntil }, type: QueryTypes.SELECT, transaction },
      ),
    );
    if (claimed.length === 0) return [];
    const rows = await this.db.sequelize.query<ClaimedRow>(
      `SELECT d.id, d.webhook_id, w.organization_id, d.message_id, d.payload, d.attempts, w.url, w.secret, w.previous_secret, w.previous_secret_until
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id IN (:ids) ORDER BY d.id`,
      { replacements: { ids: claimed.map((row) => Number(row.id)) }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({
      id: Number(row.id),
      webhook_id: Number(row.webhook_id),
      organization_id: row.organization_id === null ? null : Number(row.organization_id),
      message_id: row.message_id,
      payload: row.payload,
      attempts: Number(row.attempts),
      url: row.url,
      secrets: row.previous_secret && Number(row.previous_secret_until) > now ? [row.secret, row.previous_secret] : [row.secret],
    }));
  }

  async nextDue(now: number, room: DeliveryRoom): Promise<number | null> {
    // Another process's claim runs out when that process died: then this one takes the delivery over.
    const conditions = roomConditions(room);
    const [row] = await this.db.sequelize.query<{ due: number | null }>(
      `SELECT MIN(CASE WHEN claimed_until >= $now THEN claimed_until ELSE next_attempt_at END) AS due
       FROM (${HEADS_OF_QUEUES}) heads${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`,
      { bind: { now }, type: QueryTypes.SELECT },
    );
    return row?.due === null || row?.due === undefined ? null : Number(row.due);
  }

  async releaseOrphanedClaims(): Promise<void> {
    if (this.db.sql.sharedByProcesses) return;
    await this.db.write((transaction) =>
      this.db.sequelize.query("UPDATE webhook_deliveries SET claimed_until = NULL WHERE status = 'pending' AND claimed_until IS NOT NULL", { transaction }),
    );
  }

  async recordAttempt(deliveryId: number, outcome: AttemptOutcome, now: number): Promise<void> {
    const status = outcome.kind === 'delivered' ? 'delivered' : outcome.kind === 'retry' ? 'pending' : 'failed';
    await this.db.write((transaction) =>
      this.db.sequelize.query(
        `UPDATE webhook_deliveries SET status = $status, attempts = attempts + 1, last_attempt_at = $now, last_status_code = $statusCode,
         last_error = $error, duration_ms = $durationMs, next_attempt_at = $nextAttemptAt, claimed_until = NULL WHERE id = $deliveryId`,
        {
          bind: {
            deliveryId,
            now,
            status,
            statusCode: outcome.statusCode,
            error: outcome.kind === 'delivered' ? null : outcome.error.slice(0, MAX_ERROR),
            durationMs: outcome.durationMs,
            nextAttemptAt: outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
          },
          transaction,
        },
      ),
    );
  }

  async disable(tx: Tx, webhookId: number, reason: string, now: number): Promise<void> {
    const transaction = transactionOf(tx);
    await this.db.sequelize.query('UPDATE webhooks SET is_active = $inactive, disabled_reason = $reason, updated_at = $now WHERE id = $webhookId', {
      bind: { webhookId, inactive: false, reason: reason.slice(0, MAX_ERROR), now },
      transaction,
    });
    await this.db.sequelize.query("UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL WHERE webhook_id = $webhookId AND status = 'pending'", {
      bind: { webhookId },
      transaction,
    });
  }

  async deliveries(organizationId: number, webhookId: number, before: number | null, limit: number): Promise<WebhookDeliveryRecord[]> {
    const rows = await this.db.sequelize.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
       WHERE w.organization_id = $organizationId AND d.webhook_id = $webhookId${before === null ? '' : ' AND d.id < $before'} ORDER BY d.id DESC LIMIT $limit`,
      { bind: before === null ? { organizationId, webhookId, limit } : { organizationId, webhookId, before, limit }, type: QueryTypes.SELECT },
    );
    return rows.map(toDelivery);
  }

  async retry(tx: Tx, organizationId: number, webhookId: number, deliveryId: number, now: number): Promise<boolean> {
    if (!(await this.find(organizationId, webhookId, tx))) return false;
    const [rows] = await this.db.sequelize.query(
      "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $now, claimed_until = NULL WHERE id = $deliveryId AND webhook_id = $webhookId RETURNING id",
      { bind: { deliveryId, webhookId, now }, transaction: transactionOf(tx) },
    );
    return (rows as unknown[]).length > 0;
  }
}
