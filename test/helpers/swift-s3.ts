// OpenStack Swift with its `s3api` middleware as a second S3-protocol server for the tests: a real,
// production S3 implementation (not a fake), from Debian's packages (swift, swift-proxy,
// swift-account, swift-container, swift-object; `.ci/system-deps` installs them). swift-main.py runs
// the proxy (s3api + tempauth) and one account, container and object server in one Python process,
// on free ports of 127.0.0.1, storing into a temp dir; the test starts and stops it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { LocalS3 } from './s3.ts';

/** tempauth's user `test:tester` with key `testing`: S3 access key `test:tester`, secret `testing`. */
export const SWIFT_ACCESS_KEY = 'test:tester';
export const SWIFT_SECRET_KEY = 'testing';

/** Debian's Python, where python3-swift is installed (not a pyenv one that may come first on PATH). */
const PYTHON = '/usr/bin/python3';
const MAIN = fileURLToPath(new URL('./swift-main.py', import.meta.url));

let unavailable: string | null | undefined;
/** Why Swift can't run here, or null when it can (checked once per process). */
export function swiftUnavailable(): string | null {
  if (unavailable === undefined) {
    const probe = spawnSync(
      PYTHON,
      ['-c', 'import swift.proxy.server, swift.common.middleware.s3api.s3api'],
      {
        encoding: 'utf8',
      },
    );
    unavailable =
      probe.status === 0
        ? null
        : `OpenStack Swift is not installed (Debian packages swift, swift-proxy, swift-account, swift-container, swift-object; .ci/system-deps installs them): ${(probe.stderr || String(probe.error)).trim().split('\n').pop()}`;
  }
  return unavailable;
}

/** Starts Swift + s3api with one bucket. */
export async function startSwiftS3(bucket = 'spaces-test'): Promise<LocalS3> {
  const why = swiftUnavailable();
  if (why) throw new Error(`Swift can't run here: ${why}`);
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'swift-s3-'));
  const child = spawn(PYTHON, [MAIN, directory], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      await exited;
    }
    fs.rmSync(directory, { recursive: true, force: true });
  };
  let endpoint: string;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`swift exited (${code}): ${stderr}`)));
      child.once('error', reject);
    });
    endpoint = `http://127.0.0.1:${port}`;
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: SWIFT_ACCESS_KEY, secretAccessKey: SWIFT_SECRET_KEY },
    });
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      client.destroy();
    }
  } catch (err) {
    await close();
    throw err;
  }
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
