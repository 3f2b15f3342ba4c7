import type { components } from './generated/openapi.js';
import { GreenlightError, problemOf } from './errors.js';
import { Backoff, retryAfterHeaderMs, sleep } from './retry.js';

type Schemas = components['schemas'];

/** What each event's `data` is, by its type, as the API document's `StreamEvent` says. */
type EventData = { [Event in Schemas['StreamEvent'] as Event['event']]: Event['data'] };

/** One live event: `type` tells what `data` is; `id` is its place in the server's outbox. */
export type GreenlightEvent = { [Type in keyof EventData]: { type: Type; id: string | undefined; data: EventData[Type] } }[keyof EventData];

export interface EventsOptions {
  /** Start after this event (the `id` of one received earlier); by default, only new ones. */
  lastEventId?: string;
  signal?: AbortSignal;
}

interface EventSource {
  url: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

interface RawEvent {
  type: string;
  id: string | undefined;
  data: string;
}

/**
 * Server-Sent Events over fetch (EventSource cannot send an Authorization header). A stream
 * that ends or drops is opened again with `Last-Event-ID`, after the server's `retry:` or a
 * growing pause (reset once an event arrives), so a server that ends streams at once is not
 * hammered; 408 and 429 wait too, any other refusal (4xx) throws.
 */
export async function* streamEvents(source: EventSource, options: EventsOptions): AsyncGenerator<GreenlightEvent> {
  let lastEventId = options.lastEventId;
  const backoff = new Backoff();
  const stream = { reconnectMs: undefined as number | undefined };
  while (!options.signal?.aborted) {
    let pauseMs: number | undefined;
    try {
      const headers = { ...source.headers, Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) };
      const response = await source.fetch(source.url, { headers, signal: options.signal });
      if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
        throw new GreenlightError(response.status, await problemOf(response));
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        pauseMs = retryAfterHeaderMs(response);
      } else {
        for await (const event of parseEventStream(response.body, stream)) {
          backoff.reset();
          if (event.id !== undefined) lastEventId = event.id;
          if (Object.hasOwn(EVENT_TYPES, event.type)) yield { type: event.type, id: event.id, data: JSON.parse(event.data) } as GreenlightEvent;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      if (error instanceof GreenlightError) throw error;
    }
    await sleepUnlessAborted(pauseMs ?? stream.reconnectMs ?? backoff.next(), options.signal);
  }
}

const EVENT_TYPES: Record<keyof EventData, true> = {
  'review.created': true,
  'review.decided': true,
  'review.vote': true,
  'review.waiting': true,
  'feedback.created': true,
  'attachment.created': true,
  'attachment.deleted': true,
};

async function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch {
    // Aborted: the loop's condition ends the stream.
  }
}

/** The event stream format of the HTML standard: fields per line, events separated by a blank line. */
async function* parseEventStream(body: ReadableStream<Uint8Array>, stream: { reconnectMs: number | undefined }): AsyncGenerator<RawEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event: RawEvent = { type: 'message', id: undefined, data: '' };
  let dataLines: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      // Greenlight ends lines with \n; a \r before it (another server's CRLF) is dropped.
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (dataLines.length > 0) yield { ...event, data: dataLines.join('\n') };
          event = { type: 'message', id: event.id, data: '' };
          dataLines = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event.type = value;
        else if (field === 'data') dataLines.push(value);
        else if (field === 'id') event.id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) stream.reconnectMs = Number(value);
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
