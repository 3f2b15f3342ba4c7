import type { EntrySummary, OutboxEntry, OutboxInput } from '../domain/shared/events';

/**
 * What a NOTIFY on the events channel says of the entries a transaction committed:
 * `<origin> <id>:<code>:<review id>,…`, a code per type (`e` for a created review that expires).
 * Enough for another process to tell whether it needs an entry before it reads it.
 */
const CODES: Record<OutboxEntry['type'], string> = {
  'review.created': 'c',
  'review.decided': 'd',
  'review.vote': 'v',
  'review.waiting': 'w',
  'feedback.created': 'f',
  'attachment.created': 'a',
  'attachment.deleted': 'x',
  'principal.revoked': 'r',
  'organization.changed': 'o',
};
const EXPIRING = 'e';
const TYPES = new Map(Object.entries(CODES).map(([type, code]) => [code, type as OutboxEntry['type']]));

/** PostgreSQL refuses a notification payload of 8,000 bytes or more; a long list goes out in parts. */
const MAX_PAYLOAD_BYTES = 7_000;

/** What a notification says of an entry after its id. */
function summaryAfterId(entry: OutboxInput): string {
  if (entry.type === 'principal.revoked' || entry.type === 'organization.changed') return `:${CODES[entry.type]}:0`;
  const code = entry.type === 'review.created' && entry.payload.expires_at !== null ? EXPIRING : CODES[entry.type];
  return `:${code}:${entry.review_id}`;
}

function summaryText(entry: OutboxEntry): string {
  return `${entry.id}${summaryAfterId(entry)}`;
}

/**
 * The payload of the notification announcing one entry, as the text before and after its id:
 * the statement that stores the entry, which gives it its id, sends it too.
 */
export function notificationAroundId(origin: string, entry: OutboxInput): { before: string; after: string } {
  return { before: `${origin} `, after: summaryAfterId(entry) };
}

/** The payloads of the notifications announcing `entries` (in order), each under PostgreSQL's limit. */
export function notificationPayloads(origin: string, entries: readonly OutboxEntry[]): string[] {
  const payloads: string[] = [];
  let current: string[] = [];
  let bytes = origin.length + 1;
  for (const text of entries.map(summaryText)) {
    if (current.length > 0 && bytes + text.length + 1 > MAX_PAYLOAD_BYTES) {
      payloads.push(`${origin} ${current.join(',')}`);
      current = [];
      bytes = origin.length + 1;
    }
    current.push(text);
    bytes += text.length + 1;
  }
  if (current.length > 0) payloads.push(`${origin} ${current.join(',')}`);
  return payloads;
}

/** A notification's origin and entries; entries it cannot make out are left out. */
export function parseNotification(payload: string): { origin: string; entries: EntrySummary[] } {
  const [origin, list = ''] = payload.split(' ');
  const entries: EntrySummary[] = [];
  for (const part of list.split(',')) {
    const [id, code, reviewId] = part.split(':');
    const type = TYPES.get(code) ?? (code === EXPIRING ? 'review.created' : undefined);
    if (!type || !/^\d+$/.test(id) || !/^\d+$/.test(reviewId ?? '')) continue;
    entries.push({ id: Number(id), type, review_id: Number(reviewId), expires: code === EXPIRING });
  }
  return { origin, entries };
}
