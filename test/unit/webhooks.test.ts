import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, retryDelayMs, signature, signatureHeader } from '../../server/domain/webhooks/signing';
import { checkTarget, checkUrl, isForbiddenAddress, type Resolve } from '../../server/domain/webhooks/targets';

/** The Standard Webhooks verification, written here from the specification, independently of the server's signing. */
function verify(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${headers.id}.${headers.timestamp}.${body}`).digest('base64');
  return headers.signature.split(' ').some((candidate) => candidate === `v1,${expected}`);
}

describe('Standard Webhooks signatures', () => {
  it('match the specification’s published example', () => {
    expect(signature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verify with the reference algorithm, with either secret during a rotation', () => {
    const [old, current] = [newWebhookSecret(), newWebhookSecret()];
    expect(old).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: 'review.decided', timestamp: '2026-11-24T09:00:00.000Z', data: { id: 1 } });
    const header = signatureHeader([current, old], 'msg_1', 1795500000, body);
    expect(header.split(' ')).toHaveLength(2);
    for (const secret of [old, current]) expect(verify(secret, { id: 'msg_1', timestamp: '1795500000', signature: header }, body)).toBe(true);
    expect(verify(newWebhookSecret(), { id: 'msg_1', timestamp: '1795500000', signature: header }, body)).toBe(false);
    expect(verify(current, { id: 'msg_1', timestamp: '1795500000', signature: header }, `${body} `)).toBe(false);
  });
});

describe('the retry schedule', () => {
  const schedule = [5, 300, 1800];

  it('waits each delay of the schedule, within ±10 %, then gives up', () => {
    expect(retryDelayMs(1, schedule, null, () => 0)).toBe(4_500);
    expect(retryDelayMs(1, schedule, null, () => 1)).toBe(5_500);
    expect(retryDelayMs(2, schedule, null, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(4, schedule, null)).toBeNull();
  });

  it('never retries sooner than the receiver’s Retry-After', () => {
    expect(retryDelayMs(1, schedule, 60, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(2, schedule, 60, () => 0.5)).toBe(300_000);
  });
});

describe('the SSRF guard', () => {
  const strict = { allowPrivate: false, allowHttp: false };
  const names: Record<string, string[]> = { 'public.example': ['93.184.216.34'], 'internal.example': ['10.0.0.1'], 'mixed.example': ['93.184.216.34', '192.168.1.5'] };
  const resolve: Resolve = async (host) => {
    const found = names[host];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: 4 }));
  };

  it.each([
    ['http://127.0.0.1/hook', 'loopback'],
    ['https://169.254.169.254/latest/meta-data', 'metadata'],
    ['https://[::1]/hook', 'IPv6 loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'IPv4-mapped loopback'],
    ['https://internal.example/hook', 'a name resolving to 10.0.0.1'],
    ['https://mixed.example/hook', 'a name with one private address among public ones'],
    ['https://[fd00::1]/hook', 'IPv6 unique-local'],
  ])('refuses %s (%s)', async (url) => {
    const allowHttp = { ...strict, allowHttp: true };
    expect(await checkTarget(url, allowHttp, resolve)).toMatchObject({ ok: false, reason: expect.stringMatching(/loopback, private, link-local or metadata/) });
  });

  it('lets a public address through, and private ones only when allowed', async () => {
    expect(await checkTarget('https://public.example/hook', strict, resolve)).toEqual({ ok: true, address: '93.184.216.34', family: 4 });
    expect(await checkTarget('http://127.0.0.1:9/hook', { allowPrivate: true, allowHttp: true }, resolve)).toMatchObject({ ok: true, address: '127.0.0.1' });
  });

  it('refuses plain http unless allowed, credentials in the URL, and names that do not resolve', async () => {
    expect(checkUrl('http://public.example/hook', strict)).toBe('must be an https:// URL');
    expect(checkUrl('https://user:pass@public.example/hook', strict)).toBe('must not carry a user name or password');
    expect(checkUrl('ftp://public.example/hook', { ...strict, allowHttp: true })).toBe('must be an http:// or https:// URL');
    expect(await checkTarget('https://nowhere.example/hook', strict, resolve)).toMatchObject({ ok: false, reason: expect.stringContaining('ENOTFOUND') });
  });

  it('knows the ranges by address', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', '::ffff:10.0.0.1']) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1']) expect(isForbiddenAddress(address), address).toBe(false);
  });

  it.each([
    ['IPv4-compatible (::/96)', '::10.0.0.1', '::8.8.8.8'],
    ['IPv4-compatible, in hex', '::a00:1', '::808:808'],
    ['IPv4-mapped, in hex', '::ffff:7f00:1', '::ffff:808:808'],
    ['IPv4-translated (::ffff:0:0:0/96)', '::ffff:0:10.0.0.1', '::ffff:0:8.8.8.8'],
    ['6to4 (2002::/16)', '2002:c0a8:101::1', '2002:808:808::1'],
    ['NAT64, the well-known prefix (64:ff9b::/96)', '64:ff9b::a9fe:a9fe', '64:ff9b::8.8.8.8'],
    ['NAT64, a local prefix of length 96 (64:ff9b:1::/48)', '64:ff9b:1::10.0.0.1', '64:ff9b:1::8.8.8.8'],
    ['Teredo (2001::/32), a private client', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['Teredo, a private server', '2001:0:a00:1:8000:63bf:3fff:fdd2', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ])('judges an IPv6 address that carries IPv4 by that IPv4 address: %s', async (_form, carryingPrivate, carryingPublic) => {
    expect(isForbiddenAddress(carryingPrivate), carryingPrivate).toBe(true);
    expect(await checkTarget(`https://[${carryingPrivate}]/hook`, strict, resolve)).toMatchObject({ ok: false });
    expect(isForbiddenAddress(carryingPublic), carryingPublic).toBe(false);
    expect(await checkTarget(`https://[${carryingPublic}]/hook`, strict, resolve)).toMatchObject({ ok: true });
  });

  it('refuses site-local IPv6 (fec0::/10)', () => {
    expect(isForbiddenAddress('fec0::1')).toBe(true);
    expect(isForbiddenAddress('feff:ffff::1')).toBe(true);
  });

  it('refuses a local NAT64 address that some prefix length reads as private, or that fits none', () => {
    // With a prefix of 64 this is 10.0.0.1; only its last 32 bits read as public 1.0.0.0.
    expect(isForbiddenAddress('64:ff9b:1:0:a:0:100:0')).toBe(true);
    expect(isForbiddenAddress('64:ff9b:1:a00:0:100::')).toBe(true);
    // Bits 64 to 71 are zero in every layout (RFC 6052).
    expect(isForbiddenAddress('64:ff9b:1:0:ff00::808:808')).toBe(true);
  });
});
