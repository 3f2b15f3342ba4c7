import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventFeed, PublishedEvent } from '../domain/shared/events';
import type { Principal, Scope } from '../domain/shared/principal';

/** A client further behind than this is cut off rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Most events replayed to a stream that resumes; one further behind reloads what it shows. */
const MAX_REPLAYED = 1_000;

export interface EventStreamOptions {
  /** How often a comment line is sent so proxies keep an idle stream open. */
  heartbeatMs?: number;
}

/** The outbox, as a resuming stream reads it. */
export interface EventHistory {
  after(scope: Scope, afterId: number, limit: number): Promise<PublishedEvent[]>;
}

function visibleTo(scope: Scope, event: PublishedEvent): boolean {
  return (scope.organizationId === null || event.organization_id === scope.organizationId) && (scope.agentId === undefined || event.agent_id === scope.agentId);
}

function frame(event: PublishedEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.payload)}\n\n`;
}

/** `Last-Event-ID` (the header a reconnecting EventSource sends) as an outbox id, or null. */
function lastEventId(req: IncomingMessage): number | null {
  const value = req.headers['last-event-id'];
  return typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) ? Number(value) : null;
}

/** The last words of a stream whose credential stopped being valid: a comment, which every client skips. */
const REVOKED_COMMENT = ': closed: the API key or session this stream was opened with is no longer valid (revoked, deactivated or signed out)\n\n';

/**
 * The open Server-Sent Events streams of GET /events. Each event of the feed goes to the
 * streams of callers who may see it, as `id: <outbox id>`, `event: <type>` and the record as
 * `data:`. A client that reconnects with `Last-Event-ID` first gets what it missed, from the
 * outbox, then the live events, with none twice. A stream leaves the set (and the feed) the
 * moment its client disconnects; it is ended when its caller's credential stops being valid,
 * and on shutdown.
 */
export class EventStreams {
  /** Each open stream, with the principal (`Principal.id`) that opened it. */
  private readonly open = new Map<ServerResponse, string>();
  private readonly heartbeatMs: number;

  constructor(
    private readonly feed: EventFeed,
    private readonly history: EventHistory,
    options: EventStreamOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
  }

  get count(): number {
    return this.open.size;
  }

  async attach(req: IncomingMessage, res: ServerResponse, { scope, id: principalId }: Principal): Promise<void> {
    const resumeAfter = lastEventId(req);
    // Live events that arrive before the stream starts, or while the missed ones are read, wait
    // for them, so the order holds.
    let held: PublishedEvent[] | null = [];
    let lastSent = resumeAfter ?? 0;
    const send = (event: PublishedEvent): void => {
      if (event.id <= lastSent) return;
      if (res.writableLength > MAX_BUFFERED_BYTES) return void res.end();
      lastSent = event.id;
      res.write(frame(event));
    };
    const unsubscribe = this.feed.subscribe((event) => {
      if (!visibleTo(scope, event)) return;
      if (held) held.push(event);
      else send(event);
    });
    this.open.set(res, principalId);
    let heartbeat: NodeJS.Timeout | undefined;
    const release = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
      this.open.delete(res);
    };
    res.once('close', release);
    req.once('close', release);
    // Other processes' events reach this one only while a stream here wants them: the stream
    // starts once they do, so none committed after its client sees it start is missed.
    await this.feed.heardOnDemand();
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n: connected\n\n');
    heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.heartbeatMs);

    try {
      if (resumeAfter !== null) for (const event of await this.history.after(scope, resumeAfter, MAX_REPLAYED)) send(event);
      for (const event of held) send(event);
      held = null;
    } catch {
      // The client reconnects and asks again; a gap it was not told of must not open.
      res.end();
    }
  }

  /** Ends the streams `principalId` opened, saying why: its credential no longer holds. */
  endStreamsOf(principalId: string): void {
    for (const [res, openedBy] of [...this.open]) if (openedBy === principalId) res.end(REVOKED_COMMENT);
  }

  closeAll(): void {
    for (const res of [...this.open.keys()]) res.end();
  }
}
