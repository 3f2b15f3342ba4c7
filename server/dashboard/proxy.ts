import http from 'node:http';
import https from 'node:https';
import type { RequestHandler } from 'express';
import type { Logger } from '../logging';
import { forwardedFor } from '../http/client-address';
import { sendProblem } from '../http/problems';

/** Headers that describe one hop, not the message (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/**
 * Forwards `/api/*` to the API, streaming both ways: uploads are not buffered and event
 * streams flow as they are written. The browser only ever talks to the dashboard's origin.
 */
export function apiProxy(apiUrl: string, log: Logger): RequestHandler {
  const target = new URL(apiUrl);
  const transport = target.protocol === 'https:' ? https : http;
  const basePath = target.pathname.replace(/\/+$/, '');

  return (req, res) => {
    // Where a request comes from was judged here, against the dashboard's own address
    // (refuseCrossSiteWrites); the API would judge a dashboard page's Origin against its own.
    const { origin: _judgedHere, 'x-forwarded-for': _claimed, ...forwarded } = endToEnd(req.headers);
    let answer: http.IncomingMessage | undefined;
    const upstream = transport.request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: `${basePath}${req.url}`,
        // The API counts failed sign-ins, wrong keys and requests per browser, not per dashboard.
        headers: { ...forwarded, host: target.host, 'x-forwarded-for': forwardedFor(req) },
      },
      (received) => {
        answer = received;
        if (!req.complete) {
          // Answered before the whole body was forwarded (a refusal): the rest is not sent on,
          // and the answer reaches the browser once the rest has been read (see unread-body.ts).
          req.unpipe(upstream);
          received.once('end', () => upstream.destroy());
        }
        res.writeHead(received.statusCode ?? 502, endToEnd(received.headers));
        received.pipe(res);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      // Once the API's whole answer has come, a failure to send it the rest of a refused body changes nothing.
      if (answer?.complete) return;
      log.warn('API not reachable from the dashboard', { api: apiUrl, error: error.code ?? error.message });
      if (!res.headersSent) {
        sendProblem(res, 502, `the Greenlight API at ${apiUrl} is not reachable; is it running?`);
      } else {
        res.destroy();
      }
    });
    // A browser that goes away (a closed tab, an aborted stream) releases the upstream request.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };
}
