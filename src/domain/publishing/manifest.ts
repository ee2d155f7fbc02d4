import { createHash } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { fail } from '../../errors/problem.ts';
import { byPathOrder, type CreateVersionInput, type DeclaredFile, type ManifestFlavour } from './model.ts';
import { canonicalPath, PathSet } from './paths.ts';

const CODES: Record<ManifestFlavour, { invalid: ErrorCode; duplicate: ErrorCode; count: ErrorCode }> = {
  versions: {
    invalid: 'invalid_version_path',
    duplicate: 'manifest_duplicate_path',
    count: 'manifest_too_many_files',
  },
  publish: {
    invalid: 'invalid_publish_path',
    duplicate: 'publish_path_collision',
    count: 'version_file_count_exceeded',
  },
};

/** Checks a manifest against path rules and limits; returns canonical entries. Stores nothing. */
export function checkManifest(
  files: CreateVersionInput['files'],
  flavour: ManifestFlavour,
  limits: Config['limits'],
): DeclaredFile[] {
  const codes = CODES[flavour];
  if (files.length > limits.maxFilesPerVersion) {
    fail(
      codes.count,
      `A version holds at most ${limits.maxFilesPerVersion} files; this one lists ${files.length}.`,
      { pointer: '/files', details: { limit: limits.maxFilesPerVersion, count: files.length } },
    );
  }
  const seen = new PathSet();
  const out: DeclaredFile[] = [];
  let total = 0;
  files.forEach((f, i) => {
    const c = canonicalPath(f.path);
    if ('problem' in c) {
      fail(c.problem === 'too_long' ? 'path_too_long' : codes.invalid, `File ${i}: ${c.reason}.`, {
        pointer: `/files/${i}/path`,
        details: { path: f.path },
      });
    }
    const clash = seen.add(c.path);
    if (clash) {
      fail(
        clash.kind === 'case' ? 'path_case_collision' : codes.duplicate,
        clash.kind === 'case'
          ? `"${c.path}" differs from "${clash.other}" only in letter case.`
          : `"${c.path}" is listed twice.`,
        { pointer: `/files/${i}/path`, details: { path: c.path, collidesWith: clash.other } },
      );
    }
    if (f.size > limits.maxFileBytes) {
      fail('version_file_too_large', `"${c.path}" is larger than ${limits.maxFileBytes} bytes.`, {
        pointer: `/files/${i}/size`,
        details: { path: c.path, limit: limits.maxFileBytes, size: f.size },
      });
    }
    total += f.size;
    if (total > limits.maxVersionBytes) {
      fail('version_total_bytes_exceeded', `The files add up to more than ${limits.maxVersionBytes} bytes.`, {
        pointer: `/files/${i}/size`,
        details: { limit: limits.maxVersionBytes },
      });
    }
    out.push({ path: c.path, sha256: f.sha256.toLowerCase(), size: f.size });
  });
  return out;
}

/** Identical content ⇔ identical digest: paths, digests and sizes, in path order. */
export function manifestDigest(files: DeclaredFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort(byPathOrder)) h.update(`${f.path}\0${f.sha256}\0${f.size}\n`);
  return h.digest('hex');
}
