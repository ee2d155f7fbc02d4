import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './child-server.ts';
import { selfSignedCertificate } from './self-signed.ts';

export const PEBBLE_BIN = '/usr/bin/pebble';
export const hasPebble = fs.existsSync(PEBBLE_BIN);

/**
 * Let's Encrypt's test CA (`pebble`, Debian), started with a config of its own: its validation
 * authority resolves names through `dnsServer` and fetches HTTP-01 answers on `httpPort`.
 * `caFile` is the certificate of pebble's own HTTPS listener (trust it for the directory);
 * `root()` is the root that signs the certificates pebble issues.
 */
export interface Pebble {
  directory: string;
  caFile: string;
  root(): Promise<string>;
  close(): Promise<void>;
}

export async function startPebble(opts: {
  dnsServer: string;
  httpPort: number;
  validitySeconds?: number;
}): Promise<Pebble> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-pebble-'));
  // pebble's example config names a listener certificate the package does not ship: make one.
  const { cert, key } = selfSignedCertificate(dir, 'pebble', ['IP:127.0.0.1', 'DNS:localhost']);
  const [port, management, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const config = path.join(dir, 'pebble.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: cert,
        privateKey: key,
        httpPort: opts.httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        ...(opts.validitySeconds ? { certificateValidityPeriod: opts.validitySeconds } : {}),
      },
    }),
  );
  let log = '';
  const child: ChildProcess = spawn(PEBBLE_BIN, ['-config', config, '-dnsserver', opts.dnsServer], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_VA_ALWAYS_VALID: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (log = (log + d).slice(-4000)));
  child.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));
  const ca = fs.readFileSync(cert);
  const get = (url: string) =>
    new Promise<string>((resolve, reject) => {
      https
        .get(url, { ca }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () =>
            res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`)),
          );
        })
        .on('error', reject);
    });
  const directory = `https://127.0.0.1:${port}/dir`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await get(directory);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`pebble did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    directory,
    caFile: cert,
    root: () => get(`https://127.0.0.1:${management}/roots/0`),
    async close() {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
