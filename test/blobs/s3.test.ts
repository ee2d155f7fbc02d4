import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBlobStore } from '../../src/blobs/index.ts';
import { InlineBlobStore } from '../../src/blobs/inline.ts';
import { BlobMismatchError } from '../../src/blobs/port.ts';
import { S3BlobStore } from '../../src/blobs/s3.ts';
import { migrate, openDatabase } from '../../src/store/db.ts';
import { type LocalS3, S3RVER_KEY, startLocalS3 } from '../helpers/s3.ts';
import { startServer } from '../helpers/server.ts';
import { blobStoreContract } from './contract.ts';

// The SDK's one-time "Node 20 support ends" notice is noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

let s3: LocalS3;
let prefixes = 0;
beforeAll(async () => {
  s3 = await startLocalS3();
});
afterAll(() => s3?.close());

/** A store under a fresh prefix, so tests don't see each other's objects. */
function freshStore(): S3BlobStore {
  return S3BlobStore.fromUrl(s3.blobUrl(`p${++prefixes}/blobs`));
}

/** Every key in the bucket under a store's prefix (raw, including tmp/). */
async function rawKeys(store: S3BlobStore): Promise<string[]> {
  const res = await store.client.send(
    new ListObjectsV2Command({ Bucket: store.bucket, Prefix: `${store.prefix}/` }),
  );
  return (res.Contents ?? []).map((o) => o.Key as string);
}

/** Streams `body` in 64 KiB chunks (so a multipart upload really streams). */
function chunked(body: Buffer): Readable {
  let off = 0;
  return new Readable({
    read() {
      if (off >= body.length) return void this.push(null);
      this.push(body.subarray(off, off + 64 * 1024));
      off += 64 * 1024;
    },
  });
}

blobStoreContract('s3', async () => {
  const store = freshStore();
  return { store, cleanup: () => store.close() };
});

// Small blobs in the database, the rest on S3 (what the server runs): S3 has no batches, so a batch's
// large blobs go straight to the bucket and its small ones to the database.
blobStoreContract('inline over s3', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inline-s3-'));
  const file = path.join(dir, 'spaces.db');
  const database = await openDatabase(`sqlite:${file}`);
  await migrate(database);
  const backing = freshStore();
  const store = new InlineBlobStore(database.db, backing, { maxBytes: 1024, sqliteFile: file });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('inline over s3', () => {
  it('keeps small blobs out of the bucket and large ones in it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inline-s3-'));
    const database = await openDatabase(`sqlite:${path.join(dir, 'spaces.db')}`);
    await migrate(database);
    const backing = freshStore();
    const store = new InlineBlobStore(database.db, backing, { maxBytes: 1024 });
    try {
      const small = randomBytes(1024);
      const large = randomBytes(1025);
      const batch = store.beginBatch();
      await batch.putBuffer(sha(small), small);
      await batch.putBuffer(sha(large), large);
      await batch.commit();
      expect(await rawKeys(backing)).toEqual([
        `p${prefixes}/blobs/${sha(large).slice(0, 2)}/${sha(large).slice(2, 4)}/${sha(large)}`,
      ]);
      expect((await buffer(await store.get(sha(small)))).equals(small)).toBe(true);
      expect((await buffer(await store.get(sha(large)))).equals(large)).toBe(true);
    } finally {
      await store.close();
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('s3 blob store', () => {
  it('stores under <prefix>/<aa>/<bb>/<sha256> and leaves no temporary object', async () => {
    const store = freshStore();
    const body = Buffer.from('layout check');
    const d = sha(body);
    await store.put(d, body.length, Readable.from([body]));
    expect(await rawKeys(store)).toEqual([`${store.prefix}/${d.slice(0, 2)}/${d.slice(2, 4)}/${d}`]);
    await store.close();
  });

  it('uploads a 12 MiB blob in parts and reads ranges across part boundaries', async () => {
    const store = freshStore();
    const body = randomBytes(12 * MiB);
    const d = sha(body);
    const send = vi.spyOn(store.client, 'send');
    expect((await store.put(d, body.length, chunked(body))).created).toBe(true);
    const sent = send.mock.calls.map(([cmd]) => cmd.constructor.name);
    // 8 MiB parts: two parts, then the server-side copy into place.
    expect(sent.filter((n) => n === 'UploadPartCommand')).toHaveLength(2);
    expect(sent).toContain('CompleteMultipartUploadCommand');
    expect(sent).not.toContain('PutObjectCommand');
    send.mockRestore();

    expect(await store.stat(d)).toEqual({ size: body.length });
    expect((await buffer(await store.get(d))).equals(body)).toBe(true);
    const start = 8 * MiB - 10;
    const end = 8 * MiB + 9;
    expect((await buffer(await store.get(d, { start, end }))).equals(body.subarray(start, end + 1))).toBe(
      true,
    );
    const last = await buffer(await store.get(d, { start: body.length - 1, end: body.length - 1 }));
    expect(last.equals(body.subarray(body.length - 1))).toBe(true);
    expect(await rawKeys(store)).toHaveLength(1);
    await store.close();
  });

  it('copies into place part by part above the single-copy threshold', async () => {
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY },
    });
    const store = new S3BlobStore({
      bucket: s3.bucket,
      prefix: `p${++prefixes}`,
      client,
      partSize: 5 * MiB,
      multipartCopyThreshold: 5 * MiB,
      copyPartSize: 5 * MiB,
    });
    // s3rver doesn't implement UploadPartCopy; do what S3 does with it, over the same wire: read the
    // source range and upload it as that part. Everything else goes to the server unchanged.
    const send = client.send.bind(client);
    const ranges: string[] = [];
    const spy = vi.spyOn(client, 'send').mockImplementation((async (cmd: any) => {
      if (!(cmd instanceof UploadPartCopyCommand)) return send(cmd);
      const { Bucket, Key, UploadId, PartNumber, CopySource, CopySourceRange } = cmd.input;
      ranges.push(CopySourceRange as string);
      const [srcBucket, ...rest] = (CopySource as string).split('/');
      const src = await send(
        new GetObjectCommand({
          Bucket: srcBucket,
          Key: rest.map(decodeURIComponent).join('/'),
          Range: CopySourceRange,
        }),
      );
      const bytes = await buffer(src.Body as Readable);
      const part = await send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: bytes }));
      return { CopyPartResult: { ETag: part.ETag } };
    }) as never);
    const body = randomBytes(12 * MiB);
    const d = sha(body);
    await store.put(d, body.length, chunked(body));
    const sent = spy.mock.calls.map(([cmd]) => cmd.constructor.name);
    expect(sent).not.toContain('CopyObjectCommand');
    expect(ranges).toEqual([
      `bytes=0-${5 * MiB - 1}`,
      `bytes=${5 * MiB}-${10 * MiB - 1}`,
      `bytes=${10 * MiB}-${12 * MiB - 1}`,
    ]);
    // Stored again: freshened by a multipart copy of the object onto itself.
    spy.mockClear();
    ranges.length = 0;
    expect((await store.put(d, body.length, chunked(body))).created).toBe(false);
    expect(spy.mock.calls.map(([cmd]) => cmd.constructor.name)).toEqual([
      'HeadObjectCommand',
      'CreateMultipartUploadCommand',
      'UploadPartCopyCommand',
      'UploadPartCopyCommand',
      'UploadPartCopyCommand',
      'CompleteMultipartUploadCommand',
    ]);
    expect(ranges).toHaveLength(3);
    spy.mockRestore();
    expect((await buffer(await store.get(d))).equals(body)).toBe(true);
    expect(await rawKeys(store)).toEqual([store.keyOf(d)]);
    await store.close();
  });

  it('a mismatching upload leaves nothing under the final key or in tmp/', async () => {
    const store = freshStore();
    const body = randomBytes(6 * MiB);
    const claimed = sha(Buffer.concat([body, Buffer.from('x')]));
    // Large enough to go multipart: the mismatch is only known after every part was sent.
    const err = await store.put(claimed, body.length, chunked(body)).catch((e) => e);
    expect(err).toBeInstanceOf(BlobMismatchError);
    expect(err.kind).toBe('hash');
    expect(await store.has(claimed)).toBe(false);
    // Too many bytes: refused while streaming.
    const small = randomBytes(100);
    const tooMany = await store.put(sha(small), 99, Readable.from([small])).catch((e) => e);
    expect(tooMany).toBeInstanceOf(BlobMismatchError);
    expect(tooMany.kind).toBe('size');
    expect(await store.has(sha(small))).toBe(false);
    expect(await rawKeys(store)).toEqual([]);
    await store.close();
  });

  it('a source that fails mid-stream stores nothing', async () => {
    const store = freshStore();
    const body = randomBytes(10 * MiB);
    const d = sha(body);
    let offset = 0;
    const failing = new Readable({
      read() {
        if (offset >= 9 * MiB) return void this.destroy(new Error('connection reset'));
        this.push(body.subarray(offset, offset + 256 * 1024));
        offset += 256 * 1024;
      },
    });
    const send = vi.spyOn(store.client, 'send');
    await expect(store.put(d, body.length, failing)).rejects.toThrow('connection reset');
    // The parts already sent are given up (s3rver itself can't abort, real S3 can).
    const sent = send.mock.calls.map(([cmd]) => cmd.constructor.name);
    expect(sent).toContain('UploadPartCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    send.mockRestore();
    expect(await store.has(d)).toBe(false);
    expect(await rawKeys(store)).toEqual([]);
    await store.close();
  });

  it('a source that ends early without an error fails instead of hanging', async () => {
    const store = freshStore();
    const body = randomBytes(200_000);
    const closing = new Readable({
      read() {
        this.push(body.subarray(0, 1000));
        this.destroy();
      },
    });
    await expect(store.put(sha(body), body.length, closing)).rejects.toThrow(/premature close/i);
    expect(await store.has(sha(body))).toBe(false);
    expect(await rawKeys(store)).toEqual([]);
    await store.close();
  });

  it('stores an empty blob', async () => {
    const store = freshStore();
    const d = sha('');
    expect((await store.put(d, 0, Readable.from([]))).created).toBe(true);
    expect(await store.stat(d)).toEqual({ size: 0 });
    expect((await buffer(await store.get(d))).length).toBe(0);
    expect(await rawKeys(store)).toEqual([store.keyOf(d)]);
    await store.close();
  });

  it('when S3 fails mid-upload, the put fails, lets go of its source and stores nothing', async () => {
    const store = freshStore();
    const body = randomBytes(20 * MiB);
    const d = sha(body);
    const send = store.client.send.bind(store.client);
    const spy = vi.spyOn(store.client, 'send').mockImplementation((async (cmd: any) => {
      if (cmd instanceof UploadPartCommand) throw Object.assign(new Error('slow down'), { name: 'SlowDown' });
      return send(cmd);
    }) as never);
    const source = chunked(body);
    await expect(store.put(d, body.length, source)).rejects.toThrow('slow down');
    // The multipart upload is given up (s3rver can't abort one; that failure doesn't mask the cause).
    expect(spy.mock.calls.map(([cmd]) => cmd.constructor.name)).toContain('AbortMultipartUploadCommand');
    spy.mockRestore();
    expect(source.destroyed).toBe(true);
    expect(await store.has(d)).toBe(false);
    expect(await rawKeys(store)).toEqual([]);
    await store.close();
  });

  it('an existing blob is not uploaded again, only freshened by a copy onto itself', async () => {
    const store = freshStore();
    const body = Buffer.from('already here');
    const d = sha(body);
    await store.put(d, body.length, Readable.from([body]));
    const send = vi.spyOn(store.client, 'send');
    expect((await store.put(d, body.length, Readable.from([body]))).created).toBe(false);
    expect(send.mock.calls.map(([cmd]) => cmd.constructor.name)).toEqual(['CopyObjectCommand']);
    expect(send.mock.calls[0]![0].input).toMatchObject({
      Key: store.keyOf(d),
      CopySource: `${store.bucket}/${store.keyOf(d)}`,
      MetadataDirective: 'REPLACE',
      ContentType: 'application/octet-stream',
    });
    send.mockRestore();
    await store.close();
  });

  it('list skips temporary and foreign keys and pages through many objects', async () => {
    const store = freshStore();
    const digests: string[] = [];
    for (let i = 0; i < 25; i++) {
      const b = Buffer.from(`blob ${i}`);
      digests.push(sha(b));
      await store.put(sha(b), b.length, Readable.from([b]));
    }
    const p = store.prefix;
    const d0 = digests[0];
    for (const Key of [`${p}/tmp/${d0}.abc`, `${p}/readme.txt`, `${p}/00/00/${d0}`]) {
      await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key, Body: 'x' }));
    }
    // A pending multipart upload isn't an object either.
    await store.client.send(new CreateMultipartUploadCommand({ Bucket: store.bucket, Key: `${p}/tmp/x` }));
    const small = new S3BlobStore({
      bucket: store.bucket,
      prefix: p,
      client: store.client,
      listPageSize: 10,
    });
    const listed: string[] = [];
    const pageSpy = vi.spyOn(store.client, 'send');
    for await (const x of small.list()) listed.push(x);
    expect(listed.sort()).toEqual([...digests].sort());
    // 28 objects, 10 per page.
    expect(pageSpy.mock.calls.length).toBe(3);
    pageSpy.mockRestore();
    await store.close();
  });

  it('get of a missing blob rejects with ENOENT; names that are not digests are refused', async () => {
    const store = freshStore();
    await expect(store.get(sha('missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => store.keyOf('../../x')).toThrow();
    expect(() => store.keyOf('A'.repeat(64))).toThrow();
    await expect(store.put('nope', 1, Readable.from([Buffer.from('x')]))).rejects.toThrow();
    await store.close();
  });

  it('reads credentials from the AWS environment when the URL has none', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', S3RVER_KEY);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', S3RVER_KEY);
    try {
      const store = await openBlobStore(s3.blobUrl(`p${++prefixes}`, false));
      expect(store.kind).toBe('s3');
      const body = Buffer.from('env credentials');
      await store.put(sha(body), body.length, Readable.from([body]));
      expect(await text(await store.get(sha(body)))).toBe('env credentials');
      await store.close();
    } finally {
      vi.unstubAllEnvs();
    }
    // Wrong credentials are refused by the server (s3rver checks signatures).
    const bad = S3BlobStore.fromUrl(
      `s3://${s3.bucket}/x?endpoint=${encodeURIComponent(s3.endpoint)}&forcePathStyle=true&accessKeyId=nope&secretAccessKey=nope`,
    );
    await expect(bad.has(sha('x'))).rejects.toThrow();
    await bad.close();
  });

  it('parses and validates the blob URL', () => {
    const store = S3BlobStore.fromUrl(
      's3://my-bucket/some/prefix/?endpoint=http://127.0.0.1:4569&region=eu-west-1&forcePathStyle=true&accessKeyId=a&secretAccessKey=b',
    );
    expect(store.bucket).toBe('my-bucket');
    expect(store.prefix).toBe('some/prefix');
    expect(store.keyOf('ab'.repeat(32))).toBe(`some/prefix/ab/ab/${'ab'.repeat(32)}`);
    void store.close();
    const root = S3BlobStore.fromUrl('s3://b?accessKeyId=a&secretAccessKey=b');
    expect(root.keyOf('cd'.repeat(32))).toBe(`cd/cd/${'cd'.repeat(32)}`);
    void root.close();
    expect(() => S3BlobStore.fromUrl('s3:///prefix')).toThrow(/bucket/);
    expect(() => S3BlobStore.fromUrl('s3://b/p?endpoit=http://x')).toThrow(/unknown parameter "endpoit"/);
    expect(() => S3BlobStore.fromUrl('s3://b/p?endpoint=file:///etc')).toThrow(/endpoint/);
    expect(() => S3BlobStore.fromUrl('s3://b/p?forcePathStyle=yes')).toThrow(/forcePathStyle/);
    expect(() => S3BlobStore.fromUrl('s3://b/p?accessKeyId=a')).toThrow(/together/);
    expect(() => S3BlobStore.fromUrl('s3://b/p?partSize=1024')).toThrow(/partSize/);
    expect(() => S3BlobStore.fromUrl('s3://k:s@b/p')).toThrow(/AWS_/);
  });

  it('the server boots with S3 blobs and answers /readyz', async () => {
    const t = await startServer({ env: { SPACES_BLOB_URL: s3.blobUrl(`p${++prefixes}`) } });
    try {
      expect(t.server.services.blobs.kind).toBe('s3');
      const res = await t.api('GET', '/readyz', { token: null });
      expect(res.status).toBe(200);
      const body = Buffer.from('through the server');
      await t.server.services.blobs.put(sha(body), body.length, Readable.from([body]));
      expect(await t.server.services.blobs.has(sha(body))).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('errors other than 404 propagate (an unreachable store is not "missing")', async () => {
    const net = await import('node:net');
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    await new Promise((r) => srv.close(r));
    const store = S3BlobStore.fromUrl(
      `s3://b/p?endpoint=http://127.0.0.1:${port}&forcePathStyle=true&accessKeyId=a&secretAccessKey=b`,
    );
    await expect(store.has(sha('x'))).rejects.toThrow();
    await expect(store.stat(sha('x'))).rejects.toThrow();
    // A put that can't reach S3 fails and lets go of its source.
    const source = new Readable({ read() {} });
    source.push(Buffer.alloc(10));
    await expect(store.put(sha('y'), 1, source)).rejects.toThrow();
    expect(source.destroyed).toBe(true);
    await expect(store.get(sha('x'))).rejects.not.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('the server refuses to start with a malformed S3 blob URL', async () => {
    await expect(startServer({ env: { SPACES_BLOB_URL: 's3://b/p?bogus=1' } })).rejects.toThrow(/bogus/);
  });
});
