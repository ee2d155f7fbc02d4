// Temporary stand-in; replaced by the serve branch at merge.
import zlib from 'node:zlib';

const COMPRESSIBLE =
  /^(text\/|application\/(javascript|json|xml|manifest\+json|ld\+json|rss\+xml|atom\+xml|wasm)|image\/svg\+xml)/;

export function isCompressible(contentType: string, size: number): boolean {
  return size >= 256 && COMPRESSIBLE.test(contentType);
}

export function compressVariants(buf: Buffer): { br?: Buffer; gzip?: Buffer } {
  const br = zlib.brotliCompressSync(buf, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
  });
  const gzip = zlib.gzipSync(buf, { level: 6 });
  const out: { br?: Buffer; gzip?: Buffer } = {};
  if (br.length < buf.length * 0.95) out.br = br;
  if (gzip.length < buf.length * 0.95) out.gzip = gzip;
  return out;
}
