import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { ApiError } from '../../errors/problem.ts';
import { canonicalPath, PathSet } from './paths.ts';
import type { Spool } from './spool.ts';

/**
 * Archives are client bytes end to end: every stream made from them (the spool, gunzip, tar and zip
 * entry streams) is read through `pipeline` or async iteration, so each one's errors land in the
 * reading promise and become a problem document — never an `error` event nobody listens to.
 */

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

/** Receives each accepted file; reads `body` to its end (or throws). */
export type EntrySink = (path: string, body: AsyncIterable<Buffer>) => Promise<void>;

function tooLarge(limits: ArchiveLimits): ApiError {
  return new ApiError(
    'publish_archive_too_large',
    `The archive is larger than ${limits.maxArchiveBytes} bytes.`,
    { details: { limit: limits.maxArchiveBytes } },
  );
}

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

function fileTooLarge(limits: ArchiveLimits, path: string): ApiError {
  return new ApiError('version_file_too_large', `"${path}" is larger than ${limits.maxFileBytes} bytes.`, {
    details: { path, limit: limits.maxFileBytes },
  });
}

function damaged(format: string, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError('invalid_publish_archive', `The ${format} is damaged: ${(err as Error).message}.`);
}

/** Path, duplicate, case and count checks shared by both archive formats. */
class EntryChecker {
  private readonly paths = new PathSet();
  count = 0;

  constructor(private readonly limits: ArchiveLimits) {}

  check(name: string): string {
    // Counted first: past the cap nothing more about the archive matters.
    if (++this.count > this.limits.maxFiles) {
      throw new ApiError(
        'publish_archive_file_count_exceeded',
        `The archive holds more than ${this.limits.maxFiles} files.`,
        { details: { limit: this.limits.maxFiles } },
      );
    }
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
    return c.path;
  }
}

/** Wraps what the sink throws, so it is told apart from the archive's own failures. */
class SinkFailure {
  constructor(readonly cause: unknown) {}
}

/** Hands one entry to the sink; whatever the sink throws comes out wrapped in `SinkFailure`. */
async function deliver(sink: EntrySink, path: string, body: AsyncIterable<Buffer>): Promise<void> {
  try {
    await sink(path, body);
  } catch (err) {
    throw new SinkFailure(err);
  }
}

/**
 * An entry's bytes as the sink sees them: a failure while reading them (truncation, a bad size or
 * checksum) is the archive's fault and reaches the sink as `invalid_publish_archive` already, so a
 * sink's own failures (a full disk) keep their meaning.
 */
async function* entryBytes(source: AsyncIterable<Buffer>, format: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of source) yield chunk;
  } catch (err) {
    throw damaged(format, err);
  }
}

/** Passes chunks through, failing at the first one `onBytes` refuses. */
async function* metered(
  source: AsyncIterable<Buffer>,
  onBytes: (n: number) => ApiError | null,
): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    const err = onBytes(chunk.length);
    if (err) throw err;
    yield chunk;
  }
}

/**
 * An archive part of a publish: spooled to a temp file under the size cap (a zip needs random
 * access; the format is known from its first bytes), then read entry by entry. The spool is removed
 * however reading ends. `onChunk` sees the archive's bytes as they arrive.
 */
export async function readArchive(
  part: AsyncIterable<Buffer>,
  filename: string,
  limits: ArchiveLimits,
  spool: Spool,
  sink: EntrySink,
  onChunk: (chunk: Buffer) => void = () => {},
): Promise<number> {
  const file = await spool.file('archive');
  let size = 0;
  let head: Buffer | null = null;
  try {
    await pipeline(
      metered(part, (n) => {
        size += n;
        return size > limits.maxArchiveBytes ? tooLarge(limits) : null;
      }),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          head ??= chunk.subarray(0, 4);
          onChunk(chunk);
          yield chunk;
        }
      },
      fs.createWriteStream(file),
    );
    const h = head as Buffer | null;
    if (h && h[0] === 0x50 && h[1] === 0x4b) return await readZip(file, limits, sink);
    if ((h && h[0] === 0x1f && h[1] === 0x8b) || /\.(tgz|tar\.gz)$/i.test(filename)) {
      return await readTarGz(fs.createReadStream(file), limits, sink);
    }
    throw new ApiError('invalid_publish_archive', 'The archive is neither a zip nor a .tar.gz.');
  } finally {
    await fsp.rm(file, { force: true });
  }
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** Bytes `WindowedReader` reads at once while windowed, and per chunk of an entry's stream. */
const READ_WINDOW_BYTES = 1024 * 1024;
const STREAM_CHUNK_BYTES = 64 * 1024;

/**
 * yauzl's reader over the spooled zip. yauzl reads the central directory a record at a time (two
 * small reads each); one file read per record made a 20,000-entry directory take seconds. While
 * `windowed` (the directory pass) reads are served from a window of the file read 1 MiB at a time;
 * afterwards (local headers, one per entry, far apart) they read just what is asked. Entry bytes
 * stream from the file.
 */
class WindowedReader extends yauzl.RandomAccessReader {
  windowed = true;
  private window = Buffer.alloc(0);
  private windowAt = 0;

  constructor(private readonly handle: fsp.FileHandle) {
    super();
    // A failed close is reported as an event; the spool is removed regardless.
    this.on('error', () => {});
  }

  override _readStreamForRange(start: number, end: number): Readable {
    // Not `handle.createReadStream`: destroying that stream closes the handle, which later entries need.
    const handle = this.handle;
    async function* range(): AsyncGenerator<Buffer> {
      for (let at = start; at < end; ) {
        const n = Math.min(STREAM_CHUNK_BYTES, end - at);
        const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(n), 0, n, at);
        if (bytesRead === 0) throw new Error('unexpected end of file');
        at += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    }
    return Readable.from(range(), { objectMode: false });
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void,
  ): void {
    const from = position - this.windowAt;
    if (from >= 0 && from + length <= this.window.length) {
      this.window.copy(buffer, offset, from, from + length);
      // Not synchronously: yauzl would recurse once per record.
      queueMicrotask(() => callback(null));
      return;
    }
    const size = this.windowed ? Math.max(length, READ_WINDOW_BYTES) : length;
    this.handle.read(Buffer.allocUnsafe(size), 0, size, position).then(({ bytesRead, buffer: got }) => {
      this.window = got.subarray(0, bytesRead);
      this.windowAt = position;
      if (bytesRead < length) return callback(new Error('unexpected end of file'));
      this.window.copy(buffer, offset, 0, length);
      callback(null);
    }, callback);
  }

  override close(callback: (err: Error | null) => void): void {
    this.handle.close().then(() => callback(null), callback);
  }
}

/** The next central-directory record, or null after the last. */
function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => {
      done();
      resolve(e);
    };
    const onEnd = () => {
      done();
      resolve(null);
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** An entry's bytes, failing unless they add up to the CRC-32 its central directory record names. */
async function* crcChecked(stream: Readable, entry: yauzl.Entry, path: string): AsyncGenerator<Buffer> {
  let crc = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    crc = zlib.crc32(chunk, crc);
    yield chunk;
  }
  if (crc >>> 0 !== entry.crc32 >>> 0) {
    throw new ApiError(
      'invalid_publish_archive',
      `The archive entry "${path}" is damaged (CRC-32 mismatch).`,
      {
        details: { entry: path },
      },
    );
  }
}

/**
 * Reads a zip from a file already capped in size. The central directory is read first, whole: every
 * name, type, declared size and the file count is checked before any entry's bytes are read, so an
 * archive over a cap is refused after reading only its directory. Links, devices and odd entries are
 * refused; yauzl checks each entry's real size against the declared one and we check its CRC-32.
 */
export async function readZip(file: string, limits: ArchiveLimits, sink: EntrySink): Promise<number> {
  const handle = await fsp.open(file, 'r');
  const reader = new WindowedReader(handle);
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    handle
      .stat()
      .then(
        ({ size }) =>
          yauzl.fromRandomAccessReader(
            reader,
            size,
            { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: false },
            (err, z) => (err || !z ? reject(err ?? new Error('no zip')) : resolve(z)),
          ),
        reject,
      ),
  ).catch(async (err) => {
    await handle.close();
    throw new ApiError(
      'invalid_publish_archive',
      `The archive is not a readable zip: ${(err as Error).message}.`,
    );
  });
  // yauzl reports some failures late, on the zip or on an entry stream already given up on.
  zip.on('error', () => {});
  const checker = new EntryChecker(limits);
  try {
    const files: Array<{ path: string; entry: yauzl.Entry }> = [];
    let declared = 0;
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      // Names are decoded here, not by yauzl, so every hostile name gets our own path checks.
      const name = (entry.fileName as unknown as Buffer).toString('utf8');
      const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
      const type = mode & S_IFMT;
      const madeByUnix = entry.versionMadeBy >> 8 === 3;
      if (name.endsWith('/') || (madeByUnix && type === S_IFDIR)) continue;
      if (madeByUnix && type !== 0 && type !== S_IFREG) {
        throw new ApiError(
          'invalid_publish_archive',
          `The archive entry "${name}" is a link or special file; only plain files are published.`,
          { details: { entry: name } },
        );
      }
      const path = checker.check(name);
      if (entry.uncompressedSize > limits.maxFileBytes) throw fileTooLarge(limits, path);
      declared += entry.uncompressedSize;
      if (declared > limits.maxExpandedBytes) throw expanded(limits);
      if (
        entry.uncompressedSize > limits.ratioFloorBytes &&
        entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxRatio
      ) {
        throw ratio(limits, path);
      }
      files.push({ path, entry });
    }
    reader.windowed = false;
    for (const { path, entry } of files) {
      const stream = await new Promise<Readable>((resolve, reject) =>
        zip.openReadStream(entry, (err, s) =>
          err || !s ? reject(err ?? new Error('no stream')) : resolve(s),
        ),
      );
      stream.on('error', () => {});
      try {
        await deliver(sink, path, entryBytes(crcChecked(stream, entry, path), 'zip'));
      } finally {
        stream.destroy();
      }
    }
  } catch (err) {
    throw err instanceof SinkFailure ? err.cause : damaged('zip', err);
  } finally {
    zip.close();
  }
  return checker.count;
}

/** Reads a .tar.gz stream with every cap enforced while it streams (nothing is spooled whole). */
export async function readTarGz(body: Readable, limits: ArchiveLimits, sink: EntrySink): Promise<number> {
  const checker = new EntryChecker(limits);
  let compressed = 0;
  let total = 0;
  // The ratio is over everything gunzip yields; the expanded-size cap counts the files' own bytes.
  let inflated = 0;
  const extract = tar.extract();
  const feeding = pipeline(
    body,
    (source: AsyncIterable<Buffer>) =>
      metered(source, (n) => {
        compressed += n;
        return compressed > limits.maxArchiveBytes ? tooLarge(limits) : null;
      }),
    zlib.createGunzip(),
    (source: AsyncIterable<Buffer>) =>
      metered(source, (n) => {
        inflated += n;
        return inflated > limits.ratioFloorBytes && inflated / Math.max(compressed, 1) > limits.maxRatio
          ? ratio(limits)
          : null;
      }),
    extract,
  );
  // Whatever fails here also fails the extractor, whose iteration below reports it.
  let feedFailure: unknown = null;
  feeding.catch((err) => {
    feedFailure = err;
  });
  try {
    // tar-stream's iterator listens for errors on every entry stream it hands out.
    for await (const entry of extract) {
      const header = entry.header;
      if (header.type === 'directory') {
        for await (const _ of entry);
        continue;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        throw new ApiError(
          'invalid_publish_archive',
          `The archive entry "${header.name}" is a ${header.type}; only plain files are published.`,
          { details: { entry: header.name, type: header.type } },
        );
      }
      const path = checker.check(header.name);
      if ((header.size ?? 0) > limits.maxFileBytes) throw fileTooLarge(limits, path);
      const bytes = metered(entry as AsyncIterable<Buffer>, (n) => {
        total += n;
        return total > limits.maxExpandedBytes ? expanded(limits) : null;
      });
      await deliver(sink, path, entryBytes(bytes, 'tar.gz'));
    }
    await feeding;
  } catch (err) {
    body.destroy();
    extract.destroy();
    if (err instanceof SinkFailure) throw err.cause;
    // The first cause (a cap, a gunzip error) rather than the extractor's echo of it.
    throw damaged('tar.gz', feedFailure instanceof ApiError ? feedFailure : err);
  }
  return checker.count;
}
