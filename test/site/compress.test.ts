import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressVariants } from '../../src/domain/publishing/compress-pool.ts';
import { isCompressible } from '../../src/site/compress.ts';

describe('isCompressible', () => {
  it.each([
    ['text/html', 5000, true],
    ['text/css; charset=utf-8', 5000, true],
    ['application/javascript', 5000, true],
    ['application/json', 5000, true],
    ['image/svg+xml', 5000, true],
    ['application/vnd.api+json', 5000, true],
    ['application/wasm', 5000, true],
    ['text/html', 100, false],
    ['image/png', 5000, false],
    ['image/jpeg', 5000, false],
    ['font/woff2', 5000, false],
    ['application/zip', 5000, false],
    ['video/mp4', 5000, false],
    ['application/octet-stream', 5000, false],
  ] as const)('%s (%d bytes) → %s', (type, size, want) => {
    expect(isCompressible(type, size)).toBe(want);
  });
});

describe('compressVariants', () => {
  it('produces br and gzip that round-trip', () => {
    const buf = Buffer.from('<p>hello world</p>\n'.repeat(500));
    const v = compressVariants(buf);
    expect(v.br).toBeDefined();
    expect(v.gzip).toBeDefined();
    expect(brotliDecompressSync(v.br!).equals(buf)).toBe(true);
    expect(gunzipSync(v.gzip!).equals(buf)).toBe(true);
    expect(v.br!.length).toBeLessThan(buf.length * 0.95);
  });

  it('drops variants that save less than 5 %', () => {
    const v = compressVariants(randomBytes(10_000));
    expect(v.br).toBeUndefined();
    expect(v.gzip).toBeUndefined();
    expect(compressVariants(Buffer.alloc(0))).toEqual({});
  });
});
