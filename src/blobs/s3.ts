import { createHash, randomBytes } from 'node:crypto';
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  BlobMismatchError,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type DeleteOptions,
  deleteCutoffMs,
  SHA256_HEX,
  withBody,
} from './port.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' stores at the bucket root. */
  prefix?: string;
  client: S3Client;
  /** Part size of multipart uploads (S3's minimum is 5 MiB). */
  partSize?: number;
  /** Parts uploaded at once per blob. */
  queueSize?: number;
  /** Above this size the temp → final copy uses UploadPartCopy (single CopyObject is capped at 5 GiB). */
  multipartCopyThreshold?: number;
  /** Part size of a multipart copy. */
  copyPartSize?: number;
  /** Keys per ListObjectsV2 page (S3's maximum is 1000). */
  listPageSize?: number;
}

const QUERY_PARAMS = new Set([
  'endpoint',
  'region',
  'forcePathStyle',
  'accessKeyId',
  'secretAccessKey',
  'sessionToken',
  'partSize',
  'checksums',
]);

/**
 * Blobs as objects `<prefix>/<aa>/<bb>/<sha256>` in an S3-compatible bucket.
 *
 * A put streams the body through a hashing, size-counting transform into a temporary key
 * (`<prefix>/tmp/<sha256>.<random>`, multipart for large bodies), verifies digest and size, then copies
 * the object server-side to its final key and deletes the temporary one. Object stores make a written
 * object visible atomically, so the final key only ever holds complete, verified bytes.
 *
 * A blob's stored time is its object's LastModified (whole seconds, the server's clock). A put of a
 * blob that exists refreshes it with a server-side copy of the object onto itself.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly multipartCopyThreshold: number;
  private readonly copyPartSize: number;
  private readonly listPageSize: number;

  constructor(opts: S3BlobStoreOptions) {
    if (!opts.bucket) throw new Error('S3 blob store: bucket is required');
    this.client = opts.client;
    this.bucket = opts.bucket;
    this.prefix = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.partSize = Math.max(opts.partSize ?? 8 * MiB, 5 * MiB);
    this.queueSize = opts.queueSize ?? 4;
    this.multipartCopyThreshold = Math.min(opts.multipartCopyThreshold ?? 5 * GiB, 5 * GiB);
    this.copyPartSize = Math.max(opts.copyPartSize ?? 512 * MiB, 5 * MiB);
    this.listPageSize = Math.min(Math.max(opts.listPageSize ?? 1000, 1), 1000);
  }

  /**
   * `s3://bucket/prefix?endpoint=http://127.0.0.1:4569&region=us-east-1&forcePathStyle=true`.
   *
   * Credentials come from the standard AWS provider chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`,
   * profiles, instance roles…). `accessKeyId`/`secretAccessKey`(/`sessionToken`) query parameters are
   * accepted for local servers; the environment is preferred because a URL ends up in shell history
   * and process listings. `checksums=when_supported` turns on the SDK's default CRC checksums (off by
   * default: many S3-compatible servers reject them). `partSize` is the multipart part size in bytes.
   */
  static fromUrl(blobUrl: string): S3BlobStore {
    const url = new URL(blobUrl);
    if (url.protocol !== 's3:')
      throw new Error(`S3 blob store: expected s3://bucket[/prefix], got ${url.protocol}`);
    const bucket = decodeURIComponent(url.hostname);
    if (!bucket) throw new Error('S3 blob store: the URL names no bucket (s3://bucket/prefix)');
    if (url.username || url.password)
      throw new Error('S3 blob store: put credentials in AWS_* variables, not in the URL authority');
    const q = url.searchParams;
    for (const key of q.keys()) {
      if (!QUERY_PARAMS.has(key))
        throw new Error(`S3 blob store: unknown parameter "${key}" (known: ${[...QUERY_PARAMS].join(', ')})`);
    }
    const config: S3ClientConfig = {
      region: q.get('region') || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Site requests stream blobs straight from S3, so allow many parallel sockets (the SDK's
      // default is 50); fail fast when the endpoint can't be reached at all.
      requestHandler: {
        connectionTimeout: 10_000,
        httpAgent: { keepAlive: true, maxSockets: 256 },
        httpsAgent: { keepAlive: true, maxSockets: 256 },
      },
    };
    const endpoint = q.get('endpoint');
    if (endpoint) {
      const ep = new URL(endpoint);
      if (ep.protocol !== 'http:' && ep.protocol !== 'https:')
        throw new Error(`S3 blob store: endpoint must be http(s)://, got ${endpoint}`);
      config.endpoint = endpoint;
    }
    const pathStyle = q.get('forcePathStyle');
    if (pathStyle !== null) {
      if (pathStyle !== 'true' && pathStyle !== 'false')
        throw new Error('S3 blob store: forcePathStyle must be true or false');
      config.forcePathStyle = pathStyle === 'true';
    }
    const checksums = q.get('checksums');
    if (checksums !== null) {
      if (checksums !== 'when_required' && checksums !== 'when_supported')
        throw new Error('S3 blob store: checksums must be when_required or when_supported');
      const mode = checksums === 'when_supported' ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED';
      config.requestChecksumCalculation = mode;
      config.responseChecksumValidation = mode;
    }
    const accessKeyId = q.get('accessKeyId');
    const secretAccessKey = q.get('secretAccessKey');
    if ((accessKeyId === null) !== (secretAccessKey === null))
      throw new Error('S3 blob store: accessKeyId and secretAccessKey go together');
    if (accessKeyId !== null && secretAccessKey !== null) {
      config.credentials = {
        accessKeyId,
        secretAccessKey,
        ...(q.get('sessionToken') ? { sessionToken: q.get('sessionToken') as string } : {}),
      };
    }
    let partSize: number | undefined;
    const ps = q.get('partSize');
    if (ps !== null) {
      partSize = Number(ps);
      if (!Number.isInteger(partSize) || partSize < 5 * MiB || partSize > 5 * GiB)
        throw new Error('S3 blob store: partSize must be an integer between 5 MiB and 5 GiB (bytes)');
    }
    const prefix = decodeURIComponent(url.pathname);
    return new S3BlobStore({ bucket, prefix, client: new S3Client(config), partSize });
  }

  keyOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error('invalid blob digest');
    return this.join(`${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`);
  }

  private join(rest: string): string {
    return this.prefix ? `${this.prefix}/${rest}` : rest;
  }

  put(sha256: string, size: number, body: Readable): Promise<{ created: boolean }> {
    return withBody(body, () => this.putBody(sha256, size, body));
  }

  private async putBody(sha256: string, size: number, body: Readable): Promise<{ created: boolean }> {
    const final = this.keyOf(sha256);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('invalid blob size');
    // One request answers "is it there?" and freshens it if so (404 otherwise: write it).
    let freshened: boolean;
    try {
      freshened = await this.freshen(final, size);
    } catch (err) {
      body.destroy();
      throw err;
    }
    if (freshened) {
      body.resume();
      return { created: false };
    }
    const tmp = this.join(`tmp/${sha256}.${randomBytes(6).toString('hex')}`);
    const meter = new HashMeter(size);
    // pipeline (not pipe) so a source that errors or closes early fails the upload instead of
    // leaving it waiting for more bytes; like the disk adapter, a failed put destroys the source.
    let streamError: Error | null = null;
    pipeline(body, meter, (err) => {
      if (err) streamError = err;
    });
    let upload: Upload | null = null;
    try {
      upload = new Upload({
        client: this.client,
        params: {
          Bucket: this.bucket,
          Key: tmp,
          Body: meter,
          ContentType: 'application/octet-stream',
        },
        partSize: this.partSize,
        queueSize: this.queueSize,
        // We abort ourselves (below) so that a failing abort can't mask the actual error.
        leavePartsOnError: true,
      });
      await upload.done();
      if (meter.count !== size) throw new BlobMismatchError('size', size, meter.count);
      const actual = meter.digest();
      if (actual !== sha256) throw new BlobMismatchError('hash', sha256, actual);
      await this.copy(tmp, final, size);
      return { created: true };
    } catch (err) {
      // The cause, not what followed it (e.g. a failed abort of the multipart upload).
      const cause = meter.failure ?? streamError ?? err;
      // If S3 failed first, stop reading the source rather than leave it stalled mid-body.
      meter.destroy();
      if (upload?.uploadId) {
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: tmp, UploadId: upload.uploadId }))
          .catch(() => {});
      }
      throw cause;
    } finally {
      await this.deleteKey(tmp).catch(() => {});
    }
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(sha256),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const body = res.Body;
      if (!body) throw new Error('S3 returned no body');
      return body instanceof Readable ? body : Readable.fromWeb(body as never);
    } catch (err) {
      if (isNotFound(err)) throw notFound(sha256);
      throw err;
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.head(this.keyOf(sha256))) !== null;
  }

  async stat(sha256: string): Promise<BlobStat | null> {
    return this.head(this.keyOf(sha256));
  }

  /**
   * Unconditional: one DeleteObject, answered true (S3 does not say whether the key existed).
   * Conditional: HeadObject, then DeleteObject only if LastModified is older than `unusedSince` (less
   * the slack of {@link deleteCutoffMs}, which covers LastModified's whole seconds and sub-second
   * clock skew between this host and the server; larger skew needs a larger grace period).
   *
   * Not atomic: S3 offers no delete conditional on age (its conditional deletes match an ETag, which
   * a copy onto itself keeps; a LastModified match exists for directory buckets only). A put that
   * freshens the object between the HEAD and the DELETE — a window of one round trip — is not seen,
   * and the blob is deleted although that put counted on it.
   */
  async delete(sha256: string, opts?: DeleteOptions): Promise<boolean> {
    const key = this.keyOf(sha256);
    if (opts?.unusedSince) {
      let lastModified: Date | undefined;
      try {
        lastModified = (await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })))
          .LastModified;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      // No LastModified (a nonconforming server): keep what cannot be dated.
      if (!lastModified || lastModified.getTime() >= deleteCutoffMs(opts.unusedSince)) return false;
    }
    await this.deleteKey(key);
    return true;
  }

  async *list(): AsyncIterable<string> {
    const base = this.prefix ? `${this.prefix}/` : '';
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: this.listPageSize },
      { Bucket: this.bucket, Prefix: base },
    );
    for await (const page of pages) {
      for (const obj of page.Contents ?? []) {
        const rest = obj.Key?.slice(base.length) ?? '';
        const m = /^([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})$/.exec(rest);
        if (m?.[3].startsWith(m[1] + m[2])) yield m[3];
      }
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async head(key: string): Promise<BlobStat | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: res.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  private async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /**
   * Refreshes an object's LastModified by copying it onto itself (S3 requires new metadata for that:
   * the same content type, replaced). False when the object does not exist. A single CopyObject
   * (a 404 when the object is missing: no more requests than a HEAD); above the single-copy limit a
   * HEAD first, so a new large blob does not start a multipart copy that can only fail.
   */
  private async freshen(key: string, size: number): Promise<boolean> {
    if (size > this.multipartCopyThreshold && !(await this.head(key))) return false;
    try {
      await this.copy(key, key, size);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private copySource(key: string): string {
    return `${this.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  /** Server-side copy; multipart (UploadPartCopy) above the single-copy limit. */
  private async copy(from: string, to: string, size: number): Promise<void> {
    const CopySource = this.copySource(from);
    if (size <= this.multipartCopyThreshold) {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: to,
          CopySource,
          // A copy onto itself is refused unless something changes: the metadata, replaced by the same.
          ...(from === to ? { MetadataDirective: 'REPLACE', ContentType: 'application/octet-stream' } : {}),
        }),
      );
      return;
    }
    const { UploadId } = await this.client.send(
      new CreateMultipartUploadCommand({
        Bucket: this.bucket,
        Key: to,
        ContentType: 'application/octet-stream',
      }),
    );
    if (!UploadId) throw new Error('S3 returned no upload id');
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let start = 0, n = 1; start < size; start += this.copyPartSize, n++) {
        const end = Math.min(start + this.copyPartSize, size) - 1;
        const res = await this.client.send(
          new UploadPartCopyCommand({
            Bucket: this.bucket,
            Key: to,
            UploadId,
            PartNumber: n,
            CopySource,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        const etag = res.CopyPartResult?.ETag;
        if (!etag) throw new Error('S3 returned no ETag for a copied part');
        parts.push({ ETag: etag, PartNumber: n });
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: to,
          UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (err) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId }))
        .catch(() => {});
      throw err;
    }
  }
}

/** Passes bytes through while hashing and counting them; fails as soon as there are too many. */
class HashMeter extends Transform {
  count = 0;
  failure: BlobMismatchError | null = null;
  private readonly hash = createHash('sha256');

  constructor(private readonly expected: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.expected) {
      this.failure = new BlobMismatchError('size', this.expected, this.count);
      cb(this.failure);
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

function notFound(sha256: string): Error {
  return Object.assign(new Error(`blob ${sha256} not found`), { code: 'ENOENT' });
}
