// OpenStack Swift with its `s3api` middleware as a second S3-protocol server for the tests: a real,
// production S3 implementation (not a fake), from Debian's packages (swift, swift-proxy,
// swift-account, swift-container, swift-object; `.ci/system-deps` installs them). One account, one
// container and one object server (one replica, one device in a temp dir) behind a proxy whose
// pipeline runs s3api + tempauth, all on free ports of 127.0.0.1, started and stopped by the test.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { LocalS3 } from './s3.ts';

/** tempauth's user `test:tester` with key `testing`: S3 access key `test:tester`, secret `testing`. */
export const SWIFT_ACCESS_KEY = 'test:tester';
export const SWIFT_SECRET_KEY = 'testing';

const PYTHON = '/usr/bin/python3';
const BIN = '/usr/bin';

/** Why Swift can't run here, or null when it can (checked once). */
let unavailable: string | null | undefined;
export function swiftUnavailable(): string | null {
  if (unavailable !== undefined) return unavailable;
  const missing = [
    'swift-proxy-server',
    'swift-account-server',
    'swift-container-server',
    'swift-object-server',
  ].filter((b) => !fs.existsSync(path.join(BIN, b)));
  if (missing.length) {
    unavailable = `${missing.join(', ')} not installed (Debian packages swift-proxy, swift-account, swift-container, swift-object; .ci/system-deps installs them)`;
    return unavailable;
  }
  const probe = spawnSync(PYTHON, ['-c', 'import swift.common.middleware.s3api.s3api'], { encoding: 'utf8' });
  unavailable =
    probe.status === 0 ? null : `swift's s3api middleware does not import: ${probe.stderr.trim()}`;
  return unavailable;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

// One ring per kind, one device each: part power 6, one replica.
const MKRING = `
import sys
from swift.common.ring import RingBuilder
d = sys.argv[1]
for kind, port in zip(['account', 'container', 'object'], map(int, sys.argv[2:5])):
    b = RingBuilder(6, 1, 1)
    b.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port, 'device': 'd1', 'weight': 1.0})
    b.rebalance()
    b.get_ring().save('%s/%s.ring.gz' % (d, kind))
`;

function serverConf(dir: string, user: string, port: number, body: string): string {
  return `[DEFAULT]
bind_ip = 127.0.0.1
bind_port = ${port}
workers = 0
swift_dir = ${dir}
devices = ${dir}/srv
mount_check = false
user = ${user}
log_level = WARNING
${body}`;
}

const PROXY_PIPELINE = `
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:s3api]
use = egg:swift#s3api
location = us-east-1
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = ${SWIFT_SECRET_KEY} .admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
`;

/**
 * Starts Swift + s3api with one bucket. Each server runs under a `sh` that kills it when its stdin
 * closes, so nothing outlives the test process.
 */
export async function startSwiftS3(bucket = 'spaces-test'): Promise<LocalS3> {
  const why = swiftUnavailable();
  if (why) throw new Error(`Swift can't run here: ${why}`);
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'swift-s3-'));
  fs.mkdirSync(path.join(directory, 'srv', 'd1'), { recursive: true });
  const user = os.userInfo().username;
  const [proxy, account, container, object] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  fs.writeFileSync(
    path.join(directory, 'swift.conf'),
    '[swift-hash]\nswift_hash_path_suffix = spaces-test\nswift_hash_path_prefix = spaces-test\n' +
      '[storage-policy:0]\nname = default\ndefault = yes\n',
  );
  for (const [kind, port] of [
    ['account', account],
    ['container', container],
    ['object', object],
  ] as const) {
    fs.writeFileSync(
      path.join(directory, `${kind}-server.conf`),
      serverConf(
        directory,
        user,
        port,
        `[pipeline:main]\npipeline = ${kind}-server\n[app:${kind}-server]\nuse = egg:swift#${kind}\n`,
      ),
    );
  }
  fs.writeFileSync(
    path.join(directory, 'proxy-server.conf'),
    serverConf(directory, user, proxy, PROXY_PIPELINE),
  );
  const ring = spawnSync(
    PYTHON,
    ['-c', MKRING, directory, String(account), String(container), String(object)],
    {
      encoding: 'utf8',
    },
  );
  if (ring.status !== 0) throw new Error(`swift rings: ${ring.stderr}`);

  let log = '';
  const children: ChildProcess[] = [];
  for (const kind of ['account', 'container', 'object', 'proxy']) {
    const conf = path.join(directory, `${kind}-server.conf`);
    const child = spawn(
      'sh',
      [
        '-c',
        `"$0" "$1" & pid=$!; cat >/dev/null; kill $pid 2>/dev/null; wait $pid`,
        path.join(BIN, `swift-${kind}-server`),
        conf,
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    child.stderr?.on('data', (d) => {
      log += `[${kind}] ${d}`;
    });
    children.push(child);
  }
  const close = async () => {
    await Promise.all(
      children.map((c) => {
        if (c.exitCode !== null || c.signalCode !== null) return undefined;
        const exited = new Promise((r) => c.once('exit', r));
        c.stdin?.end();
        return exited;
      }),
    );
    fs.rmSync(directory, { recursive: true, force: true });
  };

  const endpoint = `http://127.0.0.1:${proxy}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: SWIFT_ACCESS_KEY, secretAccessKey: SWIFT_SECRET_KEY },
    maxAttempts: 1,
  });
  // The proxy answers once it listens; the bucket can be made once the account and container servers do.
  const deadline = Date.now() + 45_000;
  try {
    for (;;) {
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`swift did not start: ${(err as Error).message}\n${log}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (err) {
    client.destroy();
    await close();
    throw err;
  }
  client.destroy();
  return {
    name: 'swift',
    endpoint,
    bucket,
    directory,
    accessKeyId: SWIFT_ACCESS_KEY,
    secretAccessKey: SWIFT_SECRET_KEY,
    blobUrl(prefix = 'blobs', withKeys = true) {
      const q = new URLSearchParams({ endpoint, region: 'us-east-1', forcePathStyle: 'true' });
      if (withKeys) {
        q.set('accessKeyId', SWIFT_ACCESS_KEY);
        q.set('secretAccessKey', SWIFT_SECRET_KEY);
      }
      return `s3://${bucket}/${prefix}?${q}`;
    },
    close,
  };
}
