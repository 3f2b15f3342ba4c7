/**
 * Where a webhook may be delivered (the SSRF guard): the URL's scheme, and every address its
 * host resolves to, checked at delivery time, so that a name that resolves elsewhere later is
 * still refused. Pure: the resolver is given.
 */
import { BlockList, isIP } from 'node:net';

export interface TargetPolicy {
  /** Loopback, private and link-local targets too (tests on loopback; a private network's own receivers). */
  allowPrivate: boolean;
  /** `http://` as well as `https://`. */
  allowHttp: boolean;
}

/** Resolves a host name to its addresses (`dns.lookup` with `all: true`). */
export type Resolve = (host: string) => Promise<Array<{ address: string; family: number }>>;

export type TargetCheck = { ok: true; address: string; family: number } | { ok: false; reason: string };

/** Addresses no webhook may reach unless private targets are allowed: this machine, private networks, cloud metadata. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** An IPv6 address that carries an IPv4 one (`::ffff:127.0.0.1`) is judged as that IPv4 address. */
function embeddedIpv4(address: string): string | null {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match ? match[1] : null;
}

export function isForbiddenAddress(address: string): boolean {
  const v4 = isIP(address) === 4 ? address : embeddedIpv4(address);
  return v4 ? FORBIDDEN.check(v4, 'ipv4') : FORBIDDEN.check(address, 'ipv6');
}

/** Whether a URL is one a webhook may be registered with (the scheme; addresses are checked at delivery). */
export function checkUrl(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) return policy.allowHttp ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  return null;
}

/**
 * The address to connect to for `raw`, or why not. Every address the name resolves to must be
 * allowed: a name with one public and one private address could be made to use the second.
 */
export async function checkTarget(raw: string, policy: TargetPolicy, resolve: Resolve): Promise<TargetCheck> {
  const problem = checkUrl(raw, policy);
  if (problem) return { ok: false, reason: `the URL ${problem}` };
  const host = new URL(raw).hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  } catch (error) {
    return { ok: false, reason: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  if (!policy.allowPrivate) {
    const forbidden = addresses.find(({ address }) => isForbiddenAddress(address));
    if (forbidden) return { ok: false, reason: `${host} resolves to ${forbidden.address}, a loopback, private, link-local or metadata address` };
  }
  return { ok: true, ...addresses[0] };
}
