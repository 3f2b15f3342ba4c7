import type { Request, Response } from 'express';
import { EVENT_TYPES, type EventBus } from '../domain/events';

/** A client further behind than this is cut off rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface EventStreamOptions {
  /** How often a comment line is sent so proxies keep an idle stream open. */
  heartbeatMs?: number;
}

/**
 * The open Server-Sent Events streams of GET /events. Every event of the bus goes to every
 * stream as `event: <type>` with the record as `data:`. A stream leaves the set (and the bus)
 * the moment its client disconnects; on shutdown every stream is ended.
 */
export class EventStreams {
  private readonly open = new Set<Response>();
  private readonly heartbeatMs: number;

  constructor(
    private readonly bus: EventBus,
    options: EventStreamOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
  }

  get count(): number {
    return this.open.size;
  }

  attach(req: Request, res: Response): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n: connected\n\n');
    this.open.add(res);

    const send = (type: string, payload: unknown): void => {
      if (res.writableLength > MAX_BUFFERED_BYTES) return void res.end();
      res.write(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
    };
    const unsubscribers = EVENT_TYPES.map((type) => this.bus.on(type, (payload) => send(type, payload)));
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.heartbeatMs);

    const release = (): void => {
      clearInterval(heartbeat);
      for (const unsubscribe of unsubscribers) unsubscribe();
      this.open.delete(res);
    };
    res.once('close', release);
    req.once('close', release);
  }

  closeAll(): void {
    for (const res of [...this.open]) res.end();
  }
}
