import type { IncomingMessage } from 'node:http';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ClientAddresses } from '../../src/client-address.ts';

const fakeRequest = (peer: string, xff?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  }) as IncomingMessage;

/** [trusted proxies, socket peer, X-Forwarded-For, the client] */
const cases: Array<[string[], string, string | undefined, string]> = [
  [[], '198.51.100.1', undefined, '198.51.100.1'],
  [[], '198.51.100.1', '203.0.113.5', '198.51.100.1'],
  [['10.0.0.0/8'], '198.51.100.1', '203.0.113.5', '198.51.100.1'],
  [['10.0.0.0/8'], '10.0.0.2', undefined, '10.0.0.2'],
  [['10.0.0.0/8'], '10.0.0.2', '', '10.0.0.2'],
  [['10.0.0.0/8'], '10.0.0.2', '203.0.113.5', '203.0.113.5'],
  [['10.0.0.0/8'], '::ffff:10.0.0.2', '203.0.113.5', '203.0.113.5'],
  [['10.0.0.0/8'], '10.0.0.2', '192.0.2.1, 203.0.113.5', '203.0.113.5'],
  [['10.0.0.0/8'], '10.0.0.2', '192.0.2.1, 203.0.113.5, 10.7.7.7', '203.0.113.5'],
  [['10.0.0.0/8'], '10.0.0.2', '192.0.2.1,203.0.113.5 ,  10.7.7.7', '203.0.113.5'],
  [['10.0.0.0/8'], '10.0.0.2', '10.1.1.1, 10.7.7.7', '10.1.1.1'],
  [['10.0.0.0/8'], '10.0.0.2', 'not-an-ip, 10.7.7.7', 'not-an-ip'],
  [['10.0.0.0/8', '2001:db8::/32'], '2001:db8::1', '2001:db8::9, 2001:db9::5, 2001:db8::7', '2001:db9::5'],
  [['127.0.0.1'], '127.0.0.1', '203.0.113.5, 127.0.0.1', '203.0.113.5'],
];

describe('client address rule', () => {
  it.each(cases)('trusting %j, peer %s, X-Forwarded-For %j → %s', (trusted, peer, xff, client) => {
    expect(new ClientAddresses(trusted).clientAddress(fakeRequest(peer, xff))).toBe(client);
  });

  it('is the rule Fastify applies to req.ip with the same trust predicate', async () => {
    for (const [trusted, peer, xff, client] of cases) {
      const addresses = new ClientAddresses(trusted);
      const app = Fastify({ trustProxy: addresses.isTrustedProxy });
      app.get('/', async (req) => ({ ip: req.ip, edge: addresses.clientAddress(req.raw) }));
      const res = await app.inject({
        url: '/',
        remoteAddress: peer,
        headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
      });
      expect(res.json(), `${peer} ${xff}`).toEqual({ ip: client, edge: client });
      await app.close();
    }
  });

  it('believes X-Forwarded-Proto only from a trusted proxy', () => {
    const a = new ClientAddresses(['10.0.0.0/8']);
    const req = (peer: string) =>
      ({
        socket: { remoteAddress: peer },
        headers: { 'x-forwarded-proto': 'https' },
      }) as unknown as IncomingMessage;
    expect(a.scheme(req('10.0.0.2'), 'http')).toBe('https');
    expect(a.scheme(req('198.51.100.1'), 'http')).toBe('http');
  });
});
