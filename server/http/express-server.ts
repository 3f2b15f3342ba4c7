import http from 'node:http';
import type { Express } from 'express';
import { ClientConnections, type ConnectionLimits, serverTimeouts } from './connections';
import { plainRecord } from './plain-records';

/**
 * An HTTP server for an Express app, its connections kept by `ClientConnections`, whose
 * requests and responses are born with the app's prototypes, and responses with their
 * `res.locals` (a plain record: Express would make a hash table of each).
 *
 * Express switches each incoming request and response to its own prototypes with
 * `Object.setPrototypeOf`. V8 gives an object whose prototype was switched a hidden class of
 * its own, so every property Express and Node add afterwards builds a fresh map and
 * descriptor array — about 2 KB per open request, 20 MB for 10,000 agents holding a blocking
 * create. Constructing them from subclasses whose prototypes Express then uses as its own
 * makes the switch a no-op, and every request shares one shape again.
 */
export function httpServerFor(app: Express, limits: ConnectionLimits): ClientConnections {
  const express = app as unknown as { request: object; response: object };
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse {
    locals = plainRecord();
  }
  Object.setPrototypeOf(AppRequest.prototype, express.request);
  Object.setPrototypeOf(AppResponse.prototype, express.response);
  express.request = AppRequest.prototype;
  express.response = AppResponse.prototype;
  const server: http.Server = http.createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse, ...serverTimeouts(limits) });
  return new ClientConnections(server, limits, app);
}
