import zlib from 'node:zlib';

/**
 * Archive bytes built by hand, for tests that need what archivers refuse to write (sizes and
 * checksums that lie) or more entries than they write quickly.
 */

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header for a plain file; `size` is what the header claims. */
export function tarHeader(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(0, 12), 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** A tar of `files` (data padded to 512-byte blocks), with the two zero blocks that end it. */
export function rawTar(files: Array<[name: string, data: Buffer, declaredSize?: number]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data, declared] of files) {
    parts.push(
      tarHeader(name, declared ?? data.length),
      data,
      Buffer.alloc((512 - (data.length % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A .tar.gz of `n` one-block entries `f<i>.txt` holding `<i>` (distinct bytes each). */
export function manyEntryTarGz(n: number): Buffer {
  const tar = Buffer.alloc(n * 1024 + 1024);
  for (let i = 0; i < n; i++) {
    tarHeader(`f${i}.txt`, String(i).length).copy(tar, i * 1024);
    tar.write(String(i), i * 1024 + 512);
  }
  return zlib.gzipSync(tar, { level: 1 });
}

export interface ZipEntry {
  name: string;
  data: Buffer;
  /** Deflate the data (default: stored). */
  deflate?: boolean;
  /** Lies written into both headers instead of the true values. */
  crc32?: number;
  uncompressedSize?: number;
  compressedSize?: number;
}

/** A zip of `entries`; with more than 65,535 entries, zip64 end records. */
export function rawZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const body = e.deflate ? zlib.deflateRawSync(e.data) : e.data;
    const crc = e.crc32 ?? zlib.crc32(e.data);
    const csize = e.compressedSize ?? body.length;
    const usize = e.uncompressedSize ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(csize, 18);
    local.writeUInt32LE(usize, 22);
    local.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(e.deflate ? 8 : 0, 10);
    cd.writeUInt32LE(crc >>> 0, 16);
    cd.writeUInt32LE(csize, 20);
    cd.writeUInt32LE(usize, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    central.push(cd, name);
    offset += 30 + name.length + body.length;
  }
  const cdBytes = Buffer.concat(central);
  const tail: Buffer[] = [];
  const n = entries.length;
  if (n > 0xffff) {
    const z64 = Buffer.alloc(56);
    z64.writeUInt32LE(0x06064b50, 0);
    z64.writeBigUInt64LE(44n, 4);
    z64.writeUInt16LE(45, 12);
    z64.writeUInt16LE(45, 14);
    z64.writeBigUInt64LE(BigInt(n), 24);
    z64.writeBigUInt64LE(BigInt(n), 32);
    z64.writeBigUInt64LE(BigInt(cdBytes.length), 40);
    z64.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset + cdBytes.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(z64, locator);
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(Math.min(n, 0xffff), 8);
  eocd.writeUInt16LE(Math.min(n, 0xffff), 10);
  eocd.writeUInt32LE(cdBytes.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cdBytes, ...tail, eocd]);
}

/** A zip of `n` stored one-line entries `f<i>.txt` holding `<i>`. */
export function manyEntryZip(n: number): Buffer {
  return rawZip(Array.from({ length: n }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(String(i)) })));
}
