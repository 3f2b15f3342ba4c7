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
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local: deprecated, but still routed inside some networks as their private range.
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (valid, as `isIP` says), its zone left out. */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [head, tail] = text.split('::');
  if (tail === undefined) return groups(head);
  const before = groups(head);
  const after = groups(tail);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const ipv4Of = (bytes: readonly number[]): string => bytes.join('.');

/**
 * Where RFC 6052 puts the IPv4 address in a local-use NAT64 address (64:ff9b:1::/48, RFC 8215),
 * by byte, for each prefix length the operator may choose (48, 56, 64, 96): byte 8 is always
 * zero, and so is every byte after the IPv4 address.
 */
const LOCAL_NAT64_LAYOUTS = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
] as const;

/**
 * The IPv4 addresses an IPv6 address carries by one of the standard ways of carrying one, or
 * null when it carries none. An empty list is an address of such a range that fits none of its
 * layouts. Teredo carries two: its server's and (inverted) its client's.
 */
function carriedIpv4(address: string): string[] | null {
  const groups = ipv6Groups(address);
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  const zero = (from: number, to: number): boolean => groups.slice(from, to).every((group) => group === 0);
  const last = ipv4Of(bytes.slice(12));
  // IPv4-compatible (::/96, :: and ::1 among them), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96).
  if (zero(0, 6) || (zero(0, 5) && groups[5] === 0xffff) || (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0)) return [last];
  // NAT64, the well-known prefix (64:ff9b::/96).
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return [last];
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups[2] === 1) {
    // Which prefix length a local NAT64 uses cannot be read from the address: every layout it fits is judged.
    return LOCAL_NAT64_LAYOUTS.filter((layout) => bytes[8] === 0 && bytes.slice(layout[3] + 1).every((byte) => byte === 0)).map((layout) => ipv4Of(layout.map((at) => bytes[at])));
  }
  // 6to4 (2002::/16): the IPv4 address follows the prefix.
  if (groups[0] === 0x2002) return [ipv4Of(bytes.slice(2, 6))];
  // Teredo (2001::/32): the server's address, then the client's with every bit inverted.
  if (groups[0] === 0x2001 && groups[1] === 0) return [ipv4Of(bytes.slice(4, 8)), ipv4Of(bytes.slice(12).map((byte) => byte ^ 0xff))];
  return null;
}

/**
 * An IPv6 address that carries an IPv4 one (`::ffff:127.0.0.1`, `2002:a00:1::`, `64:ff9b::a00:1`)
 * reaches, through a translator or a tunnel, that IPv4 address, and is judged as it.
 */
export function isForbiddenAddress(address: string): boolean {
  if (isIP(address) === 4) return FORBIDDEN.check(address, 'ipv4');
  const carried = carriedIpv4(address);
  if (carried) return carried.length === 0 || carried.some((ipv4) => FORBIDDEN.check(ipv4, 'ipv4'));
  return FORBIDDEN.check(address.replace(/%.*$/, ''), 'ipv6');
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
