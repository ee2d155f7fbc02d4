import { type Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { ApiError } from '../../errors/problem.ts';
import { canonicalPath, PathSet } from './paths.ts';

/** Caps checked while an archive streams; any breach stops reading at once. */
export interface ArchiveLimits {
  maxArchiveBytes: number;
  maxExpandedBytes: number;
  maxFiles: number;
  maxFileBytes: number;
  /** Expanded ÷ compressed above this, once past `ratioFloorBytes`, is a decompression bomb. */
  maxRatio: number;
  ratioFloorBytes: number;
}

export const DEFAULT_MAX_RATIO = 100;
export const RATIO_FLOOR_BYTES = 1024 * 1024;

/** Receives each accepted file; must consume `stream` fully. */
export type EntrySink = (path: string, stream: Readable) => Promise<void>;

function expanded(limits: ArchiveLimits): ApiError {
  return new ApiError(
    'publish_archive_expanded_size_exceeded',
    `The archive expands to more than ${limits.maxExpandedBytes} bytes.`,
    { details: { limit: limits.maxExpandedBytes } },
  );
}

function ratio(limits: ArchiveLimits, entry?: string): ApiError {
  return new ApiError(
    'publish_archive_compression_ratio_exceeded',
    `${entry ? `"${entry}"` : 'The archive'} expands more than ${limits.maxRatio}× (a decompression bomb).`,
    { details: { limit: limits.maxRatio, ...(entry ? { entry } : {}) } },
  );
}

/** Path, duplicate, case and count checks shared by both archive formats. */
class EntryChecker {
  private readonly paths = new PathSet();
  count = 0;

  constructor(private readonly limits: ArchiveLimits) {}

  check(name: string): string {
    if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
      throw new ApiError('invalid_publish_path', `The archive entry "${name}" has an absolute path.`, {
        details: { entry: name },
      });
    }
    const c = canonicalPath(name);
    if ('problem' in c) {
      throw new ApiError(
        c.problem === 'too_long' ? 'path_too_long' : 'invalid_publish_path',
        `The archive entry "${name}": ${c.reason}.`,
        { details: { entry: name } },
      );
    }
    const clash = this.paths.add(c.path);
    if (clash) {
      throw new ApiError(
        clash.kind === 'case' ? 'path_case_collision' : 'publish_path_collision',
        clash.kind === 'case'
          ? `"${c.path}" differs from "${clash.other}" only in letter case.`
          : `The archive holds "${c.path}" twice.`,
        { details: { path: c.path, collidesWith: clash.other } },
      );
    }
    this.count++;
    if (this.count > this.limits.maxFiles) {
      throw new ApiError(
        'publish_archive_file_count_exceeded',
        `The archive holds more than ${this.limits.maxFiles} files.`,
        { details: { limit: this.limits.maxFiles } },
      );
    }
    return c.path;
  }
}

/** Counts bytes through a stream and fails it past `max` (the expanded-size cap, per archive). */
function meter(onBytes: (n: number) => ApiError | null): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      const err = onBytes(chunk.length);
      if (err) cb(err);
      else cb(null, chunk);
    },
  });
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** Reads a zip from a file already capped in size. Links, devices and odd entries are refused. */
export async function readZip(file: string, limits: ArchiveLimits, sink: EntrySink): Promise<number> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: true, validateEntrySizes: true, decodeStrings: false },
      (err, z) => (err || !z ? reject(err ?? new Error('no zip')) : resolve(z)),
    ),
  ).catch((err) => {
    throw new ApiError(
      'invalid_publish_archive',
      `The archive is not a readable zip: ${(err as Error).message}.`,
    );
  });
  const checker = new EntryChecker(limits);
  let total = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err) =>
        reject(
          err instanceof ApiError
            ? err
            : new ApiError('invalid_publish_archive', `The zip is damaged: ${(err as Error).message}.`),
        ),
      );
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        const handle = async () => {
          // Names are decoded here, not by yauzl, so every hostile name gets our own path checks.
          const name = (entry.fileName as unknown as Buffer).toString('utf8');
          const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
          const type = mode & S_IFMT;
          const madeByUnix = entry.versionMadeBy >> 8 === 3;
          if (name.endsWith('/') || (madeByUnix && type === S_IFDIR)) return;
          if (madeByUnix && type !== 0 && type !== S_IFREG) {
            throw new ApiError(
              'invalid_publish_archive',
              `The archive entry "${name}" is a link or special file; only plain files are published.`,
              { details: { entry: name } },
            );
          }
          const p = checker.check(name);
          if (entry.uncompressedSize > limits.maxFileBytes) {
            throw new ApiError(
              'version_file_too_large',
              `"${p}" is larger than ${limits.maxFileBytes} bytes.`,
              {
                details: { path: p, limit: limits.maxFileBytes },
              },
            );
          }
          if (total + entry.uncompressedSize > limits.maxExpandedBytes) throw expanded(limits);
          if (
            entry.uncompressedSize > limits.ratioFloorBytes &&
            entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxRatio
          ) {
            throw ratio(limits, p);
          }
          const stream = await new Promise<Readable>((res, rej) =>
            zip.openReadStream(entry, (err, s) => (err || !s ? rej(err ?? new Error('no stream')) : res(s))),
          );
          // Sizes are declared in the zip; yauzl also checks the real byte count against them.
          let seen = 0;
          const counted = stream.pipe(
            meter((n) => {
              seen += n;
              total += n;
              if (total > limits.maxExpandedBytes) return expanded(limits);
              if (seen > entry.uncompressedSize)
                return new ApiError('invalid_publish_archive', 'Entry size lies.');
              return null;
            }),
          );
          stream.on('error', (err) => counted.destroy(err));
          await sink(p, counted);
        };
        handle().then(
          () => zip.readEntry(),
          (err) => {
            zip.close();
            reject(err);
          },
        );
      });
      zip.readEntry();
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError('invalid_publish_archive', `The zip could not be read: ${(err as Error).message}.`);
  }
  return checker.count;
}

/** Reads a .tar.gz stream with every cap enforced while it streams (nothing is spooled whole). */
export async function readTarGz(body: Readable, limits: ArchiveLimits, sink: EntrySink): Promise<number> {
  const checker = new EntryChecker(limits);
  let compressed = 0;
  let total = 0;
  const extract = tar.extract();
  const gunzip = zlib.createGunzip();
  const inMeter = meter((n) => {
    compressed += n;
    if (compressed > limits.maxArchiveBytes) {
      return new ApiError(
        'publish_archive_too_large',
        `The archive is larger than ${limits.maxArchiveBytes} bytes.`,
        {
          details: { limit: limits.maxArchiveBytes },
        },
      );
    }
    return null;
  });
  // The ratio is over everything gunzip yields; the expanded-size cap counts the files' own bytes.
  let inflated = 0;
  const outMeter = meter((n) => {
    inflated += n;
    if (inflated > limits.ratioFloorBytes && inflated / Math.max(compressed, 1) > limits.maxRatio) {
      return ratio(limits);
    }
    return null;
  });
  const done = new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      for (const s of [body, inMeter, gunzip, outMeter, extract]) s.destroy();
      reject(
        err instanceof ApiError
          ? err
          : new ApiError(
              'invalid_publish_archive',
              `The archive is not a readable tar.gz: ${(err as Error).message}.`,
            ),
      );
    };
    extract.on('entry', (header, stream, next) => {
      const handle = async () => {
        if (header.type === 'directory') {
          stream.resume();
          return;
        }
        if (header.type !== 'file' && header.type !== 'contiguous-file') {
          throw new ApiError(
            'invalid_publish_archive',
            `The archive entry "${header.name}" is a ${header.type}; only plain files are published.`,
            { details: { entry: header.name, type: header.type } },
          );
        }
        const p = checker.check(header.name);
        if ((header.size ?? 0) > limits.maxFileBytes) {
          throw new ApiError(
            'version_file_too_large',
            `"${p}" is larger than ${limits.maxFileBytes} bytes.`,
            {
              details: { path: p, limit: limits.maxFileBytes },
            },
          );
        }
        const counted = (stream as unknown as Readable).pipe(
          meter((n) => {
            total += n;
            return total > limits.maxExpandedBytes ? expanded(limits) : null;
          }),
        );
        await sink(p, counted);
      };
      handle().then(() => next(), fail);
    });
    extract.on('finish', resolve);
    for (const s of [body, inMeter, gunzip, outMeter, extract]) s.on('error', fail);
  });
  body.pipe(inMeter).pipe(gunzip).pipe(outMeter).pipe(extract);
  await done;
  return checker.count;
}
