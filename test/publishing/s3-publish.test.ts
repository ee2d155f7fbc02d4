import { randomBytes } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, S3_SERVERS } from '../helpers/s3.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createSpace, download, publishViaVersions, type Site, sha } from './helpers.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const MiB = 1024 * 1024;

/** Every key under `prefix/` in the test bucket, page by page. */
async function bucketKeys(s3: LocalS3, prefix: string): Promise<string[]> {
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const res = await client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
    );
    keys.push(...(res.Contents ?? []).map((o) => o.Key as string));
    token = res.IsTruncated ? res.NextContinuationToken : undefined;
  } while (token);
  client.destroy();
  return keys;
}

// End to end through each S3-protocol server: the real server process, its HTTP API and edge, blobs
// in the bucket (none inline in the database, so every file crosses the S3 wire).
for (const server of S3_SERVERS) {
  const why = server.unavailable();
  describe.skipIf(why !== null)(
    `publishing through S3 [${server.name}]${why ? ` — skipped: ${why}` : ''}`,
    () => {
      let s3: LocalS3;
      let t: TestServer;
      beforeAll(async () => {
        s3 = await server.start();
        t = await startServer({ env: { SPACES_BLOB_URL: s3.blobUrl('e2e'), SPACES_INLINE_BLOB_BYTES: '0' } });
      });
      afterAll(async () => {
        await t?.close();
        await s3?.close();
      });

      it('publishes by uploads and by a tar batch, serves and downloads every byte; each blob is stored once', async () => {
        expect(t.server.services.blobs.kind).not.toBe('fs');
        const s = await createSpace(t, undefined, { access: 'public' });
        // big.bin is above the 8 MiB part size: a multipart upload, then a server-side copy into place.
        const site: Site = {
          'index.html': '<!doctype html><h1>through S3</h1>',
          'app.js': 'console.log("s3")',
          'big.bin': randomBytes(9 * MiB),
        };
        const r1 = await publishViaVersions(t, s.id, site);
        expect(r1.finalized!.version.status).toBe('ready');
        expect(r1.uploaded.sort()).toEqual(['app.js', 'big.bin', 'index.html']);

        // Served by the edge, whole and by range across the first part boundary.
        const host = `${s.slug}.localhost`;
        const page = await t.api('GET', '/', { token: null, host });
        expect(page.status).toBe(200);
        expect(page.text).toBe(site['index.html']);
        const start = 8 * MiB - 8;
        const end = 8 * MiB + 7;
        const ranged = await request(`${t.url}/big.bin`, {
          headers: { host, range: `bytes=${start}-${end}`, 'accept-encoding': 'identity' },
        });
        expect(ranged.statusCode).toBe(206);
        const slice = Buffer.from(await ranged.body.arrayBuffer());
        expect(slice.equals((site['big.bin'] as Buffer).subarray(start, end + 1))).toBe(true);

        // A second version through a tar batch: only what changed is uploaded.
        const site2: Site = {
          ...site,
          'index.html': '<!doctype html><h1>v2</h1>',
          'more.bin': randomBytes(6 * MiB),
        };
        const r2 = await publishViaVersions(t, s.id, site2, { batch: true });
        expect(r2.finalized!.version.status).toBe('ready');
        expect(r2.uploaded.sort()).toEqual(['index.html', 'more.bin']);
        expect((await t.api('GET', '/', { token: null, host })).text).toBe(site2['index.html']);

        for (const [r, files] of [
          [r1, site],
          [r2, site2],
        ] as const) {
          const got = await download(t, s.id, r.finalized!.version.id);
          for (const [p, c] of Object.entries(files))
            expect(got.get(p)?.equals(Buffer.from(c)), p).toBe(true);
        }

        // In the bucket: each distinct content once at <prefix>/<aa>/<bb>/<sha256>, no temporary objects.
        const keys = await bucketKeys(s3, 'e2e');
        expect(keys.filter((k) => k.startsWith('e2e/tmp/'))).toEqual([]);
        for (const c of [
          site['big.bin']!,
          site['app.js']!,
          site['index.html']!,
          site2['index.html']!,
          site2['more.bin']!,
        ]) {
          const d = sha(c);
          expect(
            keys.filter((k) => k === `e2e/${d.slice(0, 2)}/${d.slice(2, 4)}/${d}`),
            d,
          ).toHaveLength(1);
        }
      });
    },
  );
}
