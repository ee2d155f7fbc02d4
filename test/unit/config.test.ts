import { describe, expect, it } from 'vitest';
import { ConfigError, checkBootstrapToken, flagsToEnv, loadConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({}, '/srv');
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe('/srv/data');
    expect(c.databaseUrl).toBe('sqlite:/srv/data/spaces.db');
    expect(c.publicUrl).toBe('http://localhost:8080');
    expect(c.baseDomain).toBe('localhost');
    expect(c.signup).toBe('closed');
    expect(c.blobUrl).toBe('file:///srv/data/blobs');
    expect(c.siteScheme).toBe('http');
    expect(c.sitePortSuffix).toBe(':8080');
    expect(c.shutdownTimeoutMs).toBe(10_000);
    expect(loadConfig({ SPACES_SHUTDOWN_TIMEOUT: '3' }).shutdownTimeoutMs).toBe(3000);
    expect(flagsToEnv(['--shutdown-timeout', '3'])).toEqual({ SPACES_SHUTDOWN_TIMEOUT: '3' });
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SPACES_SIGNUP: 'maybe' }, 'SPACES_SIGNUP'],
    [{ SPACES_LOG_LEVEL: 'loud' }, 'SPACES_LOG_LEVEL'],
    [{ SPACES_DATABASE_URL: 'mysql://x' }, 'SPACES_DATABASE_URL'],
    [{ SPACES_PUBLIC_URL: 'localhost:8080' }, 'SPACES_PUBLIC_URL'],
    [{ SPACES_PUBLIC_URL: 'https://x.test/api' }, 'SPACES_PUBLIC_URL'],
    [{ SPACES_BASE_DOMAIN: 'not a domain' }, 'SPACES_BASE_DOMAIN'],
    [{ SPACES_BOOTSTRAP_TOKEN: 'hunter2' }, 'SPACES_BOOTSTRAP_TOKEN'],
    [{ SPACES_BOOTSTRAP_TOKEN: `sfa_${'a'.repeat(60)}` }, 'SPACES_BOOTSTRAP_TOKEN'],
    [{ SPACES_BOOTSTRAP_TOKEN: 'sfa_abcdefgh12345678' }, 'SPACES_BOOTSTRAP_TOKEN'],
    [{ SPACES_BLOB_URL: 'ftp://x' }, 'SPACES_BLOB_URL'],
    [{ SPACES_SECRET_KEY: 'short' }, 'SPACES_SECRET_KEY'],
    [{ SPACES_INLINE_BLOB_BYTES: '1048577' }, 'SPACES_INLINE_BLOB_BYTES'],
    [{ SPACES_INLINE_BLOB_BYTES: '-1' }, 'SPACES_INLINE_BLOB_BYTES'],
    [{ SPACES_CACHE_BYTES: '1MiB' }, 'SPACES_CACHE_BYTES'],
    [{ SPACES_SHUTDOWN_TIMEOUT: '0' }, 'SPACES_SHUTDOWN_TIMEOUT'],
    [{ SPACES_SHUTDOWN_TIMEOUT: '2.5' }, 'SPACES_SHUTDOWN_TIMEOUT'],
    [{ SPACES_SHUTDOWN_TIMEOUT: '10s' }, 'SPACES_SHUTDOWN_TIMEOUT'],
    [{ SPACES_SHUTDOWN_TIMEOUT: '3601' }, 'SPACES_SHUTDOWN_TIMEOUT'],
  ];
  it.each(bad)('names the variable in the error: %j', (env, variable) => {
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as Error).message).toMatch(/expected|entropy/);
  });

  it('accepts a random bootstrap token', () => {
    expect(() =>
      checkBootstrapToken(
        `sfa_${'0123456789abcdef0123456789abcdef'
          .split('')
          .sort(() => 0.5 - Math.random())
          .join('')}${'f1e2d3c4b5a69788'}`,
      ),
    ).not.toThrow();
  });

  it('maps flags to the same variables', () => {
    expect(flagsToEnv(['--port', '9000', '--base-domain=sites.test'])).toEqual({
      PORT: '9000',
      SPACES_BASE_DOMAIN: 'sites.test',
    });
    expect(() => flagsToEnv(['--nope', '1'])).toThrow(ConfigError);
  });

  it('reads where e-mail goes, and refuses what it cannot send through', () => {
    const base = { SPACES_DATA_DIR: '/srv/spaces', SPACES_PUBLIC_URL: 'https://spaces.example.com' };
    expect(loadConfig(base).mail).toEqual({
      transport: 'file',
      dir: '/srv/spaces/mail',
      from: 'Spaces <no-reply@spaces.example.com>',
    });
    expect(loadConfig({ ...base, SPACES_MAIL: 'log' }).mail.transport).toBe('log');
    expect(loadConfig({ ...base, SPACES_MAIL: 'smtps://u:p@smtp.example.com:465' }).mail).toMatchObject({
      transport: 'smtp',
      url: 'smtps://u:p@smtp.example.com:465',
    });
    expect(() => loadConfig({ ...base, SPACES_MAIL: 'sendmail' })).toThrow(/SPACES_MAIL/);
    expect(() => loadConfig({ ...base, SPACES_MAIL_FROM: 'not an address' })).toThrow(/SPACES_MAIL_FROM/);
    expect(() => loadConfig({ ...base, SPACES_MAIL_FROM: 'A <a@example.com>\r\nBcc: x@y' })).toThrow(
      /SPACES_MAIL_FROM/,
    );
  });
});
