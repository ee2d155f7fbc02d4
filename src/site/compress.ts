/**
 * Which files get compressed variants, and how (the rules; the compressing itself is publishing's,
 * `domain/publishing/compress-pool.ts`). Variants are computed once per blob when a version is
 * published and stored as blobs of their own; the edge never compresses per request.
 */

/** Below this size a compressed variant can't win back its header bytes. */
export const MIN_COMPRESSIBLE_BYTES = 256;
/** Above this size finalize would spend too long; such files are served identity (ranges still work). */
export const MAX_COMPRESSIBLE_BYTES = 64 * 1024 * 1024;
/** A variant is kept only when it saves at least this fraction of the original size. */
export const MIN_SAVING = 0.05;
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;

const COMPRESSIBLE_APPLICATION = new Set([
  'application/javascript',
  'application/ecmascript',
  'application/json',
  'application/ld+json',
  'application/manifest+json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/wasm',
  'application/x-javascript',
  'application/graphql',
  'application/geo+json',
  'application/vnd.ms-fontobject',
  'application/x-font-ttf',
  'application/x-font-opentype',
  'application/x-sh',
  'application/toml',
  'application/yaml',
  'application/x-yaml',
  'application/sql',
]);

const COMPRESSIBLE_OTHER = new Set([
  'image/svg+xml',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/bmp',
  'font/ttf',
  'font/otf',
  'font/eot',
  'font/collection',
]);

/** The media type without parameters, lowercased (`text/html; charset=utf-8` → `text/html`). */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/**
 * Whether a file of this type and size is worth precomputing `br`/`gzip` variants for. Already
 * compressed formats (images, video, audio, woff/woff2, archives) are not.
 */
export function isCompressible(contentType: string, size: number): boolean {
  if (size < MIN_COMPRESSIBLE_BYTES || size > MAX_COMPRESSIBLE_BYTES) return false;
  const type = mediaType(contentType);
  if (type.startsWith('text/')) return true;
  if (COMPRESSIBLE_APPLICATION.has(type) || COMPRESSIBLE_OTHER.has(type)) return true;
  return type.endsWith('+json') || type.endsWith('+xml');
}
