import type { IncomingMessage, ServerResponse } from 'node:http';

/** More than this left unread, and the answer goes out at once on a connection closed after it. */
export const MAX_DROPPED_BYTES = 8 * 1024 * 1024;
/** A body that stops arriving for this long is not waited for: the answer goes out, the connection closes. */
export const STALLED_BODY_MS = 1_000;

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Makes an answer given before its request's body has arrived — a refusal, a GET that ignores
 * a body, the dashboard forwarding the API's early answer — wait until that body has been read
 * and dropped, then go out. Left unread, the body would block the next request on a kept-alive
 * connection; and a connection closed with unread data makes the system send a reset, which can
 * destroy the answer before the client has read it. Past `MAX_DROPPED_BYTES` (announced or read),
 * or when the body stalls, the answer goes out at once and the connection is closed after it.
 */
export function answerAfterBody(req: IncomingMessage, res: ServerResponse): void {
  if (!hasBody(req)) return;
  // One function for every response, not a closure per request: it is kept for as long as the
  // request is held, and thousands of agents may hold a blocking create open.
  res.end = endAfterBody as typeof res.end;
}

function endAfterBody(this: ServerResponse, ...args: unknown[]): ServerResponse {
  const res = this;
  const { req } = res;
  // The response's own `end`, as it was before `answerAfterBody` stood in for it.
  const end = Object.getPrototypeOf(res).end as (...a: unknown[]) => ServerResponse;
  res.end = end as typeof res.end;
  const send = (): void => void end.apply(res, args);
  const closeAfter = (): void => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  if (req.complete || req.destroyed) return send(), res;
  if (Number(req.headers['content-length'] ?? 0) > MAX_DROPPED_BYTES) return closeAfter(), send(), res;
  let dropped = 0;
  let sent = false;
  let stalled: NodeJS.Timeout | undefined;
  const sendOnce = (): void => {
    clearTimeout(stalled);
    if (sent) return;
    sent = true;
    send();
  };
  const giveUp = (): void => {
    closeAfter();
    sendOnce();
  };
  const waitForMore = (): void => {
    clearTimeout(stalled);
    stalled = setTimeout(giveUp, STALLED_BODY_MS);
  };
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DROPPED_BYTES) giveUp();
    else if (!sent) waitForMore();
  });
  req.once('end', sendOnce);
  req.once('close', sendOnce);
  waitForMore();
  req.resume();
  return res;
}
