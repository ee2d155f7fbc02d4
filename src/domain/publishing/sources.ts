import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ApiError } from '../../errors/problem.ts';
import { PublishPayload } from '../../schemas/publishing.ts';
import { compileValidator, toValidationError } from '../../schemas/validation.ts';
import { type ArchiveLimits, DEFAULT_MAX_RATIO, RATIO_FLOOR_BYTES, readArchive } from './archive.ts';
import { type FileIntake, TooLargeError } from './ingest.ts';
import type { DeclaredFile } from './model.ts';
import type { Spool } from './spool.ts';

/**
 * Where a publish's files come from. A source yields parts in the order it reads them: files (path
 * and bytes), archives (zip or tar.gz, expanded here), and at most one payload (the publish's own
 * JSON settings: space, target, message…). The HTTP route makes one from a multipart body or an
 * inline JSON body; builds and `git push` make one from a directory.
 */
export interface FileSource {
  /** Recorded on the version (`source.type`): `direct-upload`, `directory`, … */
  readonly type: string;
  parts(): AsyncIterable<SourcePart>;
}

export type SourcePart =
  | { type: 'file'; path: string; bytes: AsyncIterable<Buffer> | Iterable<Buffer> }
  | { type: 'archive'; filename: string; bytes: AsyncIterable<Buffer> }
  | { type: 'payload'; text: string };

/** The publish settings a payload may carry. */
export interface PublishTarget {
  spaceId?: string;
  slug?: string;
  teamId?: string;
  title?: string;
  target?: 'production' | 'preview';
  message?: string | null;
  access?: 'private' | 'team' | 'public';
}

/** The caps a publish is read under (the server's, or for anonymous publishers the smaller ones). */
export interface PublishCaps {
  maxFiles: number;
  maxFileBytes: number;
  maxVersionBytes: number;
}

/** What reading a source gave: its files (stored and hashed), its payload, and a digest of both. */
export interface ReadSource {
  files: DeclaredFile[];
  target: PublishTarget;
  /** Equal for equal reads (same files, archive bytes and payload): what `Idempotency-Key` compares. */
  digest: string;
}

/** Inline JSON publishes are for small sites. */
export const INLINE_MAX_FILES = 100;
export const INLINE_MAX_BYTES = 1024 * 1024;
/** The room an archive's own headers and directory entries may take beyond its files' bytes. */
const ARCHIVE_OVERHEAD_BYTES = 64 * 1024;

export function archiveLimitsOf(caps: PublishCaps): ArchiveLimits {
  return {
    maxArchiveBytes: caps.maxVersionBytes + ARCHIVE_OVERHEAD_BYTES,
    maxExpandedBytes: caps.maxVersionBytes,
    maxFiles: caps.maxFiles,
    maxFileBytes: caps.maxFileBytes,
    maxRatio: DEFAULT_MAX_RATIO,
    ratioFloorBytes: RATIO_FLOOR_BYTES,
  };
}

function parsePayload(text: string | undefined): PublishTarget {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_publish_payload', 'The `payload` field is not valid JSON.', {
      pointer: '/payload',
    });
  }
  const check = compileValidator(PublishPayload, 'body');
  if (!check(value)) {
    const v = toValidationError(check.errors ?? [], 'body');
    throw new ApiError('invalid_publish_payload', v.detail, { pointer: `/payload${v.extras.pointer ?? ''}` });
  }
  return value as PublishTarget;
}

/**
 * Reads every part of a source into `intake` (the blob store's batch) under `caps`: files by name,
 * archives entry by entry (spooled, sniffed, bounded), the payload validated. Throws a coded problem
 * on the first breach; the caller aborts the intake then.
 */
export async function readSource(
  source: FileSource,
  caps: PublishCaps,
  intake: FileIntake,
  spool: Spool,
): Promise<ReadSource> {
  const files: DeclaredFile[] = [];
  const hash = createHash('sha256');
  const archiveLimits = archiveLimitsOf(caps);
  let payload: string | undefined;
  const ingest = async (
    p: string,
    bytes: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): Promise<DeclaredFile> => {
    try {
      return await intake.add(p, bytes);
    } catch (err) {
      if (err instanceof TooLargeError) {
        throw new ApiError('version_file_too_large', `"${p}" is larger than ${err.limit} bytes.`, {
          details: { path: p, limit: err.limit },
        });
      }
      throw err;
    }
  };
  for await (const part of source.parts()) {
    if (part.type === 'file') {
      const f = await ingest(part.path, part.bytes);
      files.push(f);
      hash.update(`f\0${f.path}\0${f.sha256}\n`);
      if (files.length > caps.maxFiles) {
        throw new ApiError('version_file_count_exceeded', `A version holds at most ${caps.maxFiles} files.`, {
          pointer: '/files',
          details: { limit: caps.maxFiles },
        });
      }
    } else if (part.type === 'archive') {
      hash.update('a\0');
      const sink = async (p: string, bytes: AsyncIterable<Buffer>) => {
        if (files.length >= caps.maxFiles) {
          throw new ApiError(
            'publish_archive_file_count_exceeded',
            `The publish holds more than ${caps.maxFiles} files.`,
            {
              details: { limit: caps.maxFiles },
            },
          );
        }
        files.push(await ingest(p, bytes));
      };
      await readArchive(part.bytes, part.filename, archiveLimits, spool, sink, (c) => hash.update(c));
    } else {
      payload = part.text;
      hash.update(`p\0${payload}\n`);
    }
  }
  if (files.length === 0) {
    throw new ApiError('invalid_publish_payload', 'The publish holds no files.', { pointer: '/files' });
  }
  return { files, target: parsePayload(payload), digest: hash.digest('hex') };
}

/** An inline JSON publish (already validated against its schema): small files given as text or base64. */
export function inlineSource(
  body: {
    files: Array<{ path: string; content: string; encoding?: 'utf8' | 'base64' }>;
  } & PublishTarget,
): FileSource {
  if (body.files.length > INLINE_MAX_FILES) {
    throw new ApiError(
      'publish_inline_limit_exceeded',
      `Inline publishes hold at most ${INLINE_MAX_FILES} files.`,
      {
        pointer: '/files',
        details: { limit: INLINE_MAX_FILES },
      },
    );
  }
  const decoded = body.files.map((f) => Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8'));
  const total = decoded.reduce((s, x) => s + x.length, 0);
  if (total > INLINE_MAX_BYTES) {
    throw new ApiError(
      'publish_inline_limit_exceeded',
      `Inline files add up to more than ${INLINE_MAX_BYTES} bytes.`,
      {
        pointer: '/files',
        details: { limit: INLINE_MAX_BYTES, bytes: total },
      },
    );
  }
  const { files, ...target } = body;
  return {
    type: 'direct-upload',
    async *parts() {
      for (const [i, f] of files.entries()) yield { type: 'file', path: f.path, bytes: [decoded[i]!] };
      yield { type: 'payload', text: JSON.stringify(target) };
    },
  };
}

/**
 * Every regular file under a directory, named by its path relative to it (`/`-separated). Symbolic
 * links and other special files are refused by name, so a source can never reach outside `root`.
 * For in-process publishers (builds, `git push`); the HTTP API never names a server path.
 */
export function directorySource(root: string, target: PublishTarget = {}): FileSource {
  return {
    type: 'directory',
    async *parts() {
      const walk = async function* (dir: string, prefix: string): AsyncGenerator<SourcePart> {
        const entries = await fsp.readdir(dir, { withFileTypes: true });
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const e of entries) {
          const rel = prefix ? `${prefix}/${e.name}` : e.name;
          const full = path.join(dir, e.name);
          if (e.isDirectory()) yield* walk(full, rel);
          else if (e.isFile()) yield { type: 'file', path: rel, bytes: fs.createReadStream(full) };
          else {
            throw new ApiError(
              'invalid_publish_path',
              `"${rel}" is not a regular file (a link or a special file).`,
              {
                details: { path: rel },
              },
            );
          }
        }
      };
      yield* walk(root, '');
      if (Object.keys(target).length) yield { type: 'payload', text: JSON.stringify(target) };
    },
  };
}
