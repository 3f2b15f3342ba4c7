import { announcedToAll, type EntrySummary, type OutboxEntry, type OutboxInput } from '../domain/shared/events';

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

/** The PostgreSQL channel every process listens on: entries `announcedToAll`. */
export const EVERY_PROCESS_CHANNEL = 'greenlight_events';
/** The channel of the other entries, which a process listens on only while a listener there may want them. */
export const ON_DEMAND_CHANNEL = 'greenlight_events_on_demand';

function expires(entry: OutboxInput): boolean {
  return entry.type === 'review.created' && entry.payload.expires_at !== null;
}

/** The channel a notification of `entry` goes out on. */
export function channelOf(entry: OutboxInput): string {
  return announcedToAll({ type: entry.type, expires: expires(entry) }) ? EVERY_PROCESS_CHANNEL : ON_DEMAND_CHANNEL;
}

/** What a notification says of an entry after its id. */
function summaryAfterId(entry: OutboxInput): string {
  if (entry.type === 'principal.revoked' || entry.type === 'organization.changed') return `:${CODES[entry.type]}:0`;
  return `:${expires(entry) ? EXPIRING : CODES[entry.type]}:${entry.review_id}`;
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

/**
 * The notifications announcing `entries`, in their order, each on its entries' channel and
 * under PostgreSQL's limit (a listener on both channels gets them in the order they were sent).
 */
export function notifications(origin: string, entries: readonly OutboxEntry[]): Array<{ channel: string; payload: string }> {
  const sent: Array<{ channel: string; payload: string }> = [];
  let current: string[] = [];
  let channel = '';
  let bytes = 0;
  const flush = (): void => {
    if (current.length > 0) sent.push({ channel, payload: `${origin} ${current.join(',')}` });
    current = [];
    bytes = origin.length + 1;
  };
  for (const entry of entries) {
    const text = summaryText(entry);
    const entryChannel = channelOf(entry);
    if (entryChannel !== channel || bytes + text.length + 1 > MAX_PAYLOAD_BYTES) {
      flush();
      channel = entryChannel;
    }
    current.push(text);
    bytes += text.length + 1;
  }
  flush();
  return sent;
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
