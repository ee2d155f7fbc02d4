import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startSwiftS3, swiftUnavailable } from './swift-s3.ts';

/** s3rver's fixed credentials (it verifies SigV4 signatures with them). */
export const S3RVER_KEY = 'S3RVER';

export interface LocalS3 {
  /** Which implementation: `s3rver` (npm, a fake) or `swift` (OpenStack Swift's s3api, Debian). */
  name: S3ServerName;
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /** The server's data directory. */
  directory: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** An `s3://` blob URL for this server; `prefix` is the key prefix. */
  blobUrl(prefix?: string, withKeys?: boolean): string;
  close(): Promise<void>;
}

export type S3ServerName = 's3rver' | 'swift';

export interface S3Server {
  name: S3ServerName;
  /** Why it can't run on this machine (the suite is then skipped, with this reason in its name). */
  unavailable(): string | null;
  start(bucket?: string): Promise<LocalS3>;
}

/**
 * The S3-protocol servers S3 suites run against (`describe.each`): s3rver, and OpenStack Swift's
 * s3api (a real implementation), so the blob store isn't tuned to one fake's quirks.
 */
export const S3_SERVERS: S3Server[] = [
  { name: 's3rver', unavailable: () => null, start: (bucket) => startLocalS3(bucket) },
  {
    name: 'swift',
    unavailable: () => swiftUnavailable(),
    start: (bucket) => startSwiftS3(bucket),
  },
];

const MAIN = fileURLToPath(new URL('./s3rver-main.mjs', import.meta.url));

/**
 * Starts a local S3-protocol server (s3rver, in a child process) on a free port of 127.0.0.1 with one
 * bucket, storing into a temp dir. Its logs are off.
 */
export async function startLocalS3(bucket = 'spaces-test'): Promise<LocalS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', MAIN, directory, bucket], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}): ${stderr}`)));
    child.once('error', reject);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    name: 's3rver',
    endpoint,
    accessKeyId: S3RVER_KEY,
    secretAccessKey: S3RVER_KEY,
    bucket,
    directory,
    blobUrl(prefix = 'blobs', withKeys = true) {
      const q = new URLSearchParams({ endpoint, region: 'us-east-1', forcePathStyle: 'true' });
      if (withKeys) {
        q.set('accessKeyId', S3RVER_KEY);
        q.set('secretAccessKey', S3RVER_KEY);
      }
      return `s3://${bucket}/${prefix}?${q}`;
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.stdin.end();
        await exited;
      }
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
