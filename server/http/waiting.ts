import type { Request, Response } from 'express';

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

/** Aborts when the client goes away before its response was sent, freeing its waiter at once. */
export function clientGoneSignal(req: Request, res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  if (req.socket.destroyed) controller.abort();
  return controller.signal;
}
