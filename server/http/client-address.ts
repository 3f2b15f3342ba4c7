import net from 'node:net';
import type { Express, Request } from 'express';

/**
 * Believes `X-Forwarded-For` from the `trusted_proxies` only, with Express's `trust proxy`
 * rules: the client is the rightmost address of the chain that is not one of them.
 */
export function trustProxies(app: Express, trustedProxies: readonly string[]): void {
  app.set('trust proxy', trustedProxies.length > 0 ? [...trustedProxies] : false);
}

/** `::ffff:192.0.2.1` → `192.0.2.1`: one client, however the socket's family put it. */
function canonical(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/**
 * The client a request comes from, for everything that counts per client (the rate limit,
 * wrong keys, failed sign-ins, MCP sessions): the peer, or the address a trusted proxy names.
 * Every browser reaches the API through the dashboard server, and every client of a
 * scaled-out installation through its load balancer: counted by the peer, they would all be
 * one. A chain that names no address where the client should be (nginx's `unknown`) counts
 * as the peer.
 */
export function clientAddress(req: Request): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  const named = req.ip ?? peer;
  return canonical(net.isIP(named) !== 0 ? named : peer);
}

/**
 * The `X-Forwarded-For` to send on: the chain as far as trusted proxies vouch for it, then the
 * peer. A chain from anyone else is replaced, not extended, so a client cannot name itself.
 */
export function forwardedFor(req: Request): string {
  return [...req.ips, req.socket.remoteAddress ?? 'unknown'].join(', ');
}
