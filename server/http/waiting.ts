import type { Request, Response } from 'express';
import type { WaitSignal } from '../domain/reviews/waiters';

/**
 * `Prefer: wait=N` (RFC 7240): the client will wait at most N seconds. Other preferences in
 * the header are ignored; a malformed value is treated as absent, as the RFC asks.
 */
export function preferredWaitSeconds(header: string | undefined): number | undefined {
  if (!header) return undefined;
  for (const preference of header.split(',')) {
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(preference.split(';')[0]);
    if (match) return Number(match[1]);
  }
  return undefined;
}

const SIGNAL = Symbol('the wait a held response answers');

type HeldResponse = Response & { [SIGNAL]?: ClientGone };

/**
 * A held response's `close`: its client went away, unless the response was sent. One function
 * for every response rather than a closure per request, since thousands may be held at once.
 */
function clientClosed(this: HeldResponse): void {
  if (!this.writableFinished) this[SIGNAL]?.abort();
}

/**
 * Aborts when the client goes away before its response was sent, freeing its waiter at once.
 * Not an `AbortSignal`: each of those carries an event target, two maps and a hidden class of
 * its own, about 0.8 KB for every waiting agent; this is one small object, which the response
 * points to, and a listener shared by every response. It tells the one wait it is given to.
 */
class ClientGone implements WaitSignal {
  aborted = false;
  private listener: { handleEvent(): void } | undefined;

  constructor(req: Request, res: HeldResponse) {
    res[SIGNAL] = this;
    res.on('close', clientClosed);
    if (req.socket.destroyed) this.aborted = true;
  }

  addEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    this.listener = listener;
  }

  removeEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.listener?.handleEvent();
  }
}

export function clientGoneSignal(req: Request, res: Response): WaitSignal {
  return new ClientGone(req, res);
}
