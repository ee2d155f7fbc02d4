// Worker thread of the compression pool (compress-pool.ts): brotli + gzip variants of many small
// files per message. Plain JavaScript so it loads without the TypeScript loader.
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const { brotliQuality, gzipLevel, minSaving } = workerData;

/** Smallest window that still covers the whole input (less memory to set up per call). */
const lgwin = (n) => Math.max(16, Math.min(24, Math.ceil(Math.log2(n + 16))));
/**
 * The same for deflate: a window covering the whole input (plus deflate's lookahead) finds the same
 * matches as the default 32 KiB one, and inputs up to 16 KiB get a smaller hash table. Setting up the
 * default state (256 KiB) was a quarter of gzip's time on 2 KiB files; outputs measured the same size
 * at 0.4 and 2.6 KB and at most ~1 % larger between 4 and 16 KB.
 */
const gzipOptions = (n) => ({
  level: gzipLevel,
  windowBits: Math.max(9, Math.min(15, Math.ceil(Math.log2(n + 262)))),
  memLevel: n <= 16 * 1024 ? 6 : 8,
});

parentPort.on('message', ({ id, data, lengths }) => {
  try {
    const input = Buffer.from(data);
    const parts = [];
    const results = [];
    let inOff = 0;
    let outOff = 0;
    const keep = (buf) => {
      parts.push(buf);
      const r = {
        sha256: createHash('sha256').update(buf).digest('hex'),
        offset: outOff,
        length: buf.length,
      };
      outOff += buf.length;
      return r;
    };
    for (const len of lengths) {
      const buf = input.subarray(inOff, inOff + len);
      inOff += len;
      // The input's own digest: the caller checks it against the declared one (no second hash).
      const r = { sha256: createHash('sha256').update(buf).digest('hex') };
      if (len > 0) {
        const limit = len * (1 - minSaving);
        const br = brotliCompressSync(buf, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
            [constants.BROTLI_PARAM_SIZE_HINT]: len,
            [constants.BROTLI_PARAM_LGWIN]: lgwin(len),
          },
        });
        if (br.length <= limit) r.br = keep(br);
        const gz = gzipSync(buf, gzipOptions(len));
        if (gz.length <= limit) r.gzip = keep(gz);
      }
      results.push(r);
    }
    const out = Buffer.concat(parts, outOff);
    const ab =
      out.byteOffset === 0 && out.byteLength === out.buffer.byteLength
        ? out.buffer
        : out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
    parentPort.postMessage({ id, results, data: ab }, [ab]);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.stack ?? err) });
  }
});
