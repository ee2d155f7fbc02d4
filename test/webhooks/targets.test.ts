import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filterMatches, unknownFilterIndex } from '../../src/domain/webhooks/catalogue.ts';
import { retryDelayMs } from '../../src/domain/webhooks/model.ts';
import { postOnce } from '../../src/domain/webhooks/send.ts';
import {
  createSafeDispatcher,
  parseOutboundPolicy,
  type Resolver,
  refusedUrlReason,
} from '../../src/net/outbound.ts';

/**
 * The webhook target guard (shared with proxy rewrites): a corpus of URLs that must be refused by
 * default — every private spelling of 127.0.0.1, IPv6 forms, decimal/octal/hex IPv4, names that
 * resolve inside — and the public ones that pass. DNS answers come from a table (no network).
 */
const dns: Record<string, string[]> = {
  'public.example': ['93.184.216.34'],
  'public6.example': ['2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example': ['10.0.0.5'],
  'loop.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '192.168.1.1'],
  'metadata.example': ['169.254.169.254'],
  'v6loop.example': ['::1'],
  'mapped.example': ['::ffff:127.0.0.1'],
};
const resolve: Resolver = async (name) =>
  (dns[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const strict = parseOutboundPolicy('', 'SPACES_WEBHOOK_ALLOW');

const REFUSED = [
  'http://public.example/hook', // plain http
  'ftp://public.example/',
  'https://127.0.0.1/',
  'https://127.1/',
  'https://2130706433/', // decimal
  'https://0x7f000001/', // hex
  'https://0177.0.0.1/', // octal
  'https://0x7f.0.0.1/',
  'https://017700000001/',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::127.0.0.1]/',
  'https://[64:ff9b::7f00:1]/', // NAT64 of loopback
  'https://[2002:7f00:1::]/', // 6to4 of loopback
  'https://10.0.0.1/',
  'https://172.16.5.4/',
  'https://192.168.0.1/',
  'https://169.254.169.254/latest/meta-data/',
  'https://[fd00:ec2::254]/',
  'https://100.64.0.1/', // CGNAT
  'https://224.0.0.1/', // multicast
  'https://[ff02::1]/',
  'https://0.0.0.0/',
  'https://0/',
  'https://[::]/',
  'https://[fe80::1]/',
  'https://255.255.255.255/',
  'https://internal.example/',
  'https://loop.example/',
  'https://mixed.example/', // one inside address is enough
  'https://metadata.example/',
  'https://v6loop.example/',
  'https://mapped.example/',
  'https://nowhere.example/', // does not resolve
  'https://user:pw@public.example/',
  'not a url',
];
const ALLOWED = [
  'https://public.example/hook',
  'https://public6.example/',
  'https://93.184.216.34/x',
  'https://[2606:4700::1111]/',
];

describe('webhook target guard', () => {
  it.each(REFUSED)('refuses %s', async (url) => {
    expect(await refusedUrlReason(url, strict, resolve)).toEqual(expect.any(String));
  });
  it.each(ALLOWED)('allows %s', async (url) => {
    expect(await refusedUrlReason(url, strict, resolve)).toBeNull();
  });
  it('SPACES_WEBHOOK_ALLOW opens http and named ranges, nothing else', async () => {
    const open = parseOutboundPolicy('http, 127.0.0.1, 10.0.0.0/8', 'SPACES_WEBHOOK_ALLOW');
    expect(open.allowHttp).toBe(true);
    expect(await refusedUrlReason('http://127.0.0.1:8080/', open, resolve)).toBeNull();
    expect(await refusedUrlReason('https://internal.example/', open, resolve)).toBeNull();
    expect(await refusedUrlReason('https://192.168.0.1/', open, resolve)).toEqual(expect.any(String));
    expect(await refusedUrlReason('https://169.254.169.254/', open, resolve)).toEqual(expect.any(String));
    expect(() => parseOutboundPolicy('nonsense!', 'SPACES_WEBHOOK_ALLOW')).toThrow(/SPACES_WEBHOOK_ALLOW/);
  });
  it('the dispatcher refuses at connect time a name that resolves inside (DNS changed since the check)', async () => {
    const dispatcher = createSafeDispatcher({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const out = await postOnce('http://rebound.example/hook', {}, '{}', {
      dispatcher,
      timeoutMs: 2000,
      maxResponseBytes: 1024,
    });
    await dispatcher.close();
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/^Refused: .*127\.0\.0\.1/);
  });
});

describe('delivery POST', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('gives up when no answer comes within the timeout', async () => {
    const dispatcher = createSafeDispatcher({ allow: parseOutboundPolicy('127.0.0.1', 'X').allow });
    const out = await postOnce(url, {}, '{}', { dispatcher, timeoutMs: 300, maxResponseBytes: 1024 });
    await dispatcher.close();
    expect(out).toMatchObject({ ok: false, status: null, error: 'No answer within 300 ms.' });
  });
});

describe('event filters and backoff', () => {
  it('matches *, exact codes and resource.*', () => {
    expect(filterMatches(['*'], 'version.ready')).toBe(true);
    expect(filterMatches([], 'version.ready')).toBe(true);
    expect(filterMatches(['version.ready'], 'version.ready')).toBe(true);
    expect(filterMatches(['version.ready'], 'version.failed')).toBe(false);
    expect(filterMatches(['version.*'], 'version.failed')).toBe(true);
    expect(filterMatches(['version.*'], 'versions.failed')).toBe(false);
    expect(unknownFilterIndex(['*', 'api_key.*', 'webhook.secret_rotated'])).toBe(-1);
    expect(unknownFilterIndex(['space.created', 'space.exploded'])).toBe(1);
    expect(unknownFilterIndex(['*.*'])).toBe(0);
  });
  it('backs off ×4 from 30 s to at most 12 h, with ±20 % jitter', () => {
    expect(retryDelayMs(1, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(2, () => 0.5)).toBe(120_000);
    expect(retryDelayMs(1, () => 0)).toBe(24_000);
    expect(retryDelayMs(1, () => 0.999999)).toBeLessThanOrEqual(36_000);
    expect(retryDelayMs(7, () => 0.5)).toBe(12 * 3600_000);
  });
});
