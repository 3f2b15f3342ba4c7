import { createHash } from 'node:crypto';
import type { DomainEvent } from '../shared/events';
import type { AuditActor, AuditRecord, AuditTarget, AuditVerification, HashedFields } from './records';
import { type Actor, type AuditEntryInput, SYSTEM } from '../shared/unit-of-work';
import type { AuditFilters, AuditRepository } from './ports';

/** The `prev_hash` of an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level: the same entry always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  // Built in one pass: every audited change and every keyed create canonicalises its JSON.
  if (Array.isArray(value)) {
    let array = '[';
    for (let i = 0; i < value.length; i += 1) array += `${i === 0 ? '' : ','}${canonicalJson(value[i]) ?? ''}`;
    return `${array}]`;
  }
  const record = value as Record<string, unknown>;
  let object = '{';
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    object += `${object.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${object}}`;
}

/**
 * What an entry's hash covers beside the previous entry's hash: its canonical JSON. The fields
 * are known, so their keys are written in canonical (sorted) order here rather than sorted for
 * every entry; only `data` is canonicalised.
 */
export function hashedText({ organization_id, action, target_type, target_id, data, actor, created_at }: HashedFields): string {
  // Entries written before actors had labels were hashed without one.
  const label = actor.label === null ? '' : `"label":${JSON.stringify(actor.label)},`;
  const actorJson = `{"id":${JSON.stringify(actor.id)},${label}"type":${JSON.stringify(actor.type)}}`;
  return (
    `{"action":${JSON.stringify(action)},"actor":${actorJson},"created_at":${JSON.stringify(created_at)},"data":${canonicalJson(data)},` +
    `"organization_id":${JSON.stringify(organization_id)},"target_id":${JSON.stringify(target_id)},"target_type":${JSON.stringify(target_type)}}`
  );
}

/** SHA-256 over the previous entry's hash and this entry's canonical JSON: a chain per organization. */
export function entryHash(prevHash: string, fields: HashedFields): string {
  return createHash('sha256').update(prevHash).update(hashedText(fields)).digest('hex');
}

export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: null, label: 'system' };

/** The actor an audit entry names for a change made `by` a caller or by the system. */
export function auditActorOf(by: Actor): AuditActor {
  if (by === SYSTEM) return SYSTEM_ACTOR;
  const label = by.label ?? null;
  switch (by.kind) {
    case 'operator':
      return { type: 'operator', id: 'operator', label };
    case 'user':
      return { type: 'user', id: by.id, label };
    default:
      return { type: 'api_key', id: by.id || null, label };
  }
}

/** The audit entry of a review event, or null for an event outside any organization. */
export function auditEntryOf(event: DomainEvent): AuditEntryInput | null {
  if (event.organization_id === null) return null;
  const organization_id = event.organization_id;
  switch (event.type) {
    case 'review.created':
      return { organization_id, action: 'review.created', target_type: 'review', target_id: event.review_id, data: { task_type: event.payload.task_type, urgency: event.payload.urgency, status: event.payload.status } };
    case 'review.decided': {
      const decision = event.payload.decision;
      return {
        organization_id,
        action: 'review.decided',
        target_type: 'review',
        target_id: event.review_id,
        data: { decision_type: decision?.decision_type ?? null, reviewer_id: decision?.reviewer_id ?? null, reviewer_name: decision?.reviewer_name ?? null },
        // A routing rule's decision, made as the review was filed: the system's, not the filer's.
        ...(decision?.reviewer_id === null && decision.reviewer_name?.startsWith('rule:') ? { bySystem: true as const } : {}),
      };
    }
    case 'review.vote': {
      const vote = event.payload.workflow?.votes.at(-1);
      return { organization_id, action: 'review.voted', target_type: 'review', target_id: event.review_id, data: { decision_type: vote?.decision_type ?? null, stage: vote?.stage ?? null, user_id: vote?.user_id ?? null } };
    }
    case 'review.waiting':
      // An agent's wait comes and goes with its connection; it changes nothing anyone decided.
      return null;
    case 'feedback.created':
      return { organization_id, action: 'feedback.created', target_type: 'feedback', target_id: event.payload.id, data: { review_id: event.review_id, rating: event.payload.rating } };
    case 'attachment.created':
      return { organization_id, action: 'attachment.created', target_type: 'attachment', target_id: event.payload.id, data: { review_id: event.review_id, file_name: event.payload.file_name, size_bytes: event.payload.size_bytes, sha256: event.payload.sha256 } };
    case 'attachment.deleted':
      return { organization_id, action: 'attachment.deleted', target_type: 'attachment', target_id: event.payload.id, data: { review_id: event.review_id } };
  }
}

/** An organization's audit log, read by its admins. */
export class AuditService {
  constructor(private readonly entries: AuditRepository) {}

  /** A page of entries, newest first, with the names of the targets they name. */
  async list(
    organizationId: number,
    filters: AuditFilters,
    cursor: number | null,
    limit: number,
  ): Promise<{ entries: AuditRecord[]; next_cursor: number | null; targets: AuditTarget[] }> {
    await this.entries.link(organizationId);
    const page = await this.entries.list(organizationId, filters, cursor, limit + 1);
    const entries = page.slice(0, limit);
    const refs = entries.flatMap((entry) => (entry.target_id === null ? [] : [{ type: entry.target_type, id: entry.target_id }]));
    return { entries, next_cursor: page.length > limit ? entries[entries.length - 1].sequence : null, targets: await this.entries.targets(organizationId, refs) };
  }

  /**
   * Recomputes the chain from the first entry to the head: the first entry whose hash, link or
   * place does not hold, or, when the entries end before the head, that the newest are missing.
   * Entries appended after the head was read are left for the next check.
   */
  async verify(organizationId: number): Promise<AuditVerification> {
    await this.entries.link(organizationId);
    const head = await this.entries.head(organizationId);
    let previous = GENESIS_HASH;
    let checked = 0;
    for (;;) {
      const page = await this.entries.chain(organizationId, checked, VERIFY_PAGE);
      for (const entry of page) {
        checked += 1;
        const last = checked === head.sequence;
        const holds =
          checked <= head.sequence && entry.sequence === checked && entry.prev_hash === previous && entryHash(previous, entry) === entry.hash && (!last || entry.hash === head.hash);
        if (!holds) return { valid: false, entries: checked, first_invalid_id: entry.id, head };
        if (last) return { valid: true, entries: checked, first_invalid_id: null, head };
        previous = entry.hash;
      }
      if (page.length < VERIFY_PAGE) return { valid: checked === head.sequence, entries: checked, first_invalid_id: null, head };
    }
  }
}

const VERIFY_PAGE = 1_000;
