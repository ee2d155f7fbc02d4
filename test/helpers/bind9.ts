import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './child-server.ts';

export const NAMED_BIN = '/usr/sbin/named';
export const hasBind9 = fs.existsSync(NAMED_BIN);

/**
 * A real BIND 9 (`named`, Debian `bind9`), started in the foreground with a config of its own on a
 * free port of 127.0.0.1: authoritative for `zones` (no recursion), each accepting RFC 2136 updates
 * signed with one TSIG key. The SPACES_RFC2136_* settings that point Spaces at it are in `env`.
 */
export interface Bind9 {
  /** `127.0.0.1:<port>`, for SPACES_DNS_SERVERS or pebble's `-dnsserver`. */
  address: string;
  port: number;
  keyName: string;
  secret: string;
  env: Record<string, string>;
  /** The tail of named's output (for a failing test's message). */
  log(): string;
  close(): Promise<void>;
}

export async function startBind9(opts: {
  /** Zone name → extra records in zone-file syntax (`www IN A 127.0.0.1`). */
  zones: Record<string, string[]>;
}): Promise<Bind9> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bind9-'));
  const keyName = 'spaces-acme';
  const secret = randomBytes(32).toString('base64');
  let log = '';
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const zoneBlocks: string[] = [];
    for (const [zone, records] of Object.entries(opts.zones)) {
      const file = path.join(dir, `${zone}.zone`);
      fs.writeFileSync(
        file,
        [
          '$TTL 60',
          `@ IN SOA ns.${zone}. hostmaster.${zone}. 1 60 60 600 60`,
          `@ IN NS ns.${zone}.`,
          'ns IN A 127.0.0.1',
          ...records,
          '',
        ].join('\n'),
      );
      fs.rmSync(`${file}.jnl`, { force: true });
      zoneBlocks.push(
        `zone "${zone}" { type primary; file "${file}"; allow-update { key "${keyName}"; }; };`,
      );
    }
    const conf = path.join(dir, 'named.conf');
    fs.writeFileSync(
      conf,
      `options {
  directory "${dir}";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  pid-file none;
  session-keyfile none;
  recursion no;
  dnssec-validation no;
  notify no;
  allow-query { any; };
};
controls { };
key "${keyName}" { algorithm hmac-sha256; secret "${secret}"; };
${zoneBlocks.join('\n')}
`,
    );
    log = '';
    const child: ChildProcess = spawn(NAMED_BIN, ['-g', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (log = (log + d).slice(-4000)));
    child.stderr!.on('data', (d) => (log = (log + d).slice(-4000)));
    const deadline = Date.now() + 15_000;
    // named's last start-up line is "<time> running" ("running on Linux…" comes early, not it).
    const ready = () => /\d running$/m.test(log);
    while (!ready() && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (ready()) {
      return {
        address: `127.0.0.1:${port}`,
        port,
        keyName,
        secret,
        env: {
          SPACES_RFC2136_SERVER: `127.0.0.1:${port}`,
          SPACES_RFC2136_ZONE: Object.keys(opts.zones).join(','),
          SPACES_RFC2136_KEY_NAME: keyName,
          SPACES_RFC2136_KEY_ALGORITHM: 'hmac-sha256',
          SPACES_RFC2136_KEY_SECRET: secret,
        },
        log: () => log,
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
    if (child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    // The port was taken between freePort() and named's bind (UDP or TCP): try another.
    if (attempt >= 2) throw new Error(`named did not start: ${log}`);
  }
}
