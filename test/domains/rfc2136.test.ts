import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { Rfc2136Provider } from '../../src/domain/domains/rfc2136.ts';
import { type Bind9, hasBind9, startBind9 } from '../helpers/bind9.ts';

/** The RFC 2136 DNS provider against a real BIND 9: TSIG-signed updates, and what it refuses. */
describe.skipIf(!hasBind9)('RFC 2136 dynamic update (bind9)', () => {
  let bind: Bind9;
  beforeAll(async () => {
    bind = await startBind9({ zones: { 'example.test': [], 'other.test': [] } });
  });
  afterAll(async () => {
    await bind?.close();
  });

  const provider = (over: Partial<ConstructorParameters<typeof Rfc2136Provider>[0]> = {}) =>
    new Rfc2136Provider({
      host: '127.0.0.1',
      port: bind.port,
      keyName: bind.keyName,
      algorithm: 'hmac-sha256',
      secret: Buffer.from(bind.secret, 'base64'),
      zones: ['example.test', 'other.test'],
      ...over,
    });
  const txt = async (name: string) => {
    const r = new Resolver();
    r.setServers([bind.address]);
    return (await r.resolveTxt(name).catch(() => [])).map((c) => c.join('')).sort();
  };

  it('adds TXT values beside each other and removes exactly one', async () => {
    const p = provider();
    await p.addTxt('_acme-challenge.example.test', 'one');
    await p.addTxt('_acme-challenge.example.test', 'two');
    await p.addTxt('_acme-challenge.a.other.test', 'three');
    expect(await txt('_acme-challenge.example.test')).toEqual(['one', 'two']);
    expect(await txt('_acme-challenge.a.other.test')).toEqual(['three']);
    await p.removeTxt('_acme-challenge.example.test', 'one');
    expect(await txt('_acme-challenge.example.test')).toEqual(['two']);
    // Removing what is not there is no error.
    await p.removeTxt('_acme-challenge.example.test', 'one');
    // A value longer than one character-string (255 bytes) is split and read back whole.
    const long = 'x'.repeat(300);
    await p.addTxt('_acme-challenge.long.example.test', long);
    expect(await txt('_acme-challenge.long.example.test')).toEqual([long]);
  });

  it('says what is wrong: the secret, the key, the zone', async () => {
    await expect(
      provider({ secret: Buffer.from('not the secret') }).addTxt('_acme-challenge.example.test', 'x'),
    ).rejects.toThrow(/BADSIG/);
    await expect(provider({ keyName: 'nobody' }).addTxt('_acme-challenge.example.test', 'x')).rejects.toThrow(
      /BADKEY/,
    );
    await expect(provider().addTxt('_acme-challenge.elsewhere.test', 'x')).rejects.toThrow(
      /none of the zones/,
    );
    // A zone we claim but the server does not serve.
    await expect(
      provider({ zones: ['elsewhere.test'] }).addTxt('_acme-challenge.elsewhere.test', 'x'),
    ).rejects.toThrow(/NOTAUTH|REFUSED/);
    await expect(provider({ port: 1 }).addTxt('_acme-challenge.example.test', 'x')).rejects.toThrow(
      /DNS update to 127\.0\.0\.1:1/,
    );
    expect(await txt('_acme-challenge.example.test')).not.toContain('x');
  });

  it('reads SPACES_RFC2136_* all together, and refuses half a configuration', () => {
    const base = { SPACES_DATA_DIR: '/tmp' };
    const full = {
      ...base,
      SPACES_RFC2136_SERVER: '127.0.0.1:5353',
      SPACES_RFC2136_ZONE: 'Example.test., other.test',
      SPACES_RFC2136_KEY_NAME: 'spaces-acme.',
      SPACES_RFC2136_KEY_SECRET: bind.secret,
    };
    expect(loadConfig(full).rfc2136).toMatchObject({
      host: '127.0.0.1',
      port: 5353,
      zones: ['example.test', 'other.test'],
      keyName: 'spaces-acme',
      algorithm: 'hmac-sha256',
    });
    expect(loadConfig({ ...full, SPACES_RFC2136_SERVER: 'ns1.example.test' }).rfc2136?.port).toBe(53);
    expect(loadConfig(base).rfc2136).toBeNull();
    expect(() => loadConfig({ ...full, SPACES_RFC2136_KEY_SECRET: '' })).toThrow(/SPACES_RFC2136_KEY_SECRET/);
    expect(() => loadConfig({ ...full, SPACES_RFC2136_KEY_ALGORITHM: 'rot13' })).toThrow(
      /SPACES_RFC2136_KEY_ALGORITHM/,
    );
    expect(() => loadConfig({ ...full, SPACES_RFC2136_SERVER: 'a b:99999' })).toThrow(
      /SPACES_RFC2136_SERVER/,
    );
  });
});
