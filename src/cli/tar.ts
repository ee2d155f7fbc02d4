import fs from 'node:fs';

/**
 * A tar archive (POSIX ustar, pax `path` records for names ustar can't hold) built in one buffer.
 * The batch upload sends thousands of small files per request: writing headers and bytes straight
 * into one allocation, reading each file with a blocking read into its place, costs a fraction of a
 * streaming packer's per-entry machinery (measured ~4× on 2,000 × 2 KiB files).
 */

/** What an entry needs: its name in the archive, its size, and its bytes or where they are on disk. */
export interface TarSource {
  path: string;
  size: number;
  bytes?: Buffer;
  abs?: string;
}

const BLOCK = 512;
/** Largest size the 11 octal digits of a ustar header hold (8 GiB − 1). */
const MAX_USTAR_SIZE = 0o77777777777;

const padded = (n: number) => Math.ceil(n / BLOCK) * BLOCK;

/** `name` split into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a slash, if it fits. */
function ustarName(name: string): { name: string; prefix: string } | null {
  if (Buffer.byteLength(name) <= 100) return { name, prefix: '' };
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) > 155) return null;
    if (rest && Buffer.byteLength(rest) <= 100) return { name: rest, prefix };
  }
  return null;
}

/** A pax extended header body: `<len> path=<name>\n`, where len counts the whole record. */
function paxPath(name: string): Buffer {
  const body = ` path=${name}\n`;
  const n = Buffer.byteLength(body);
  let len = n + String(n).length;
  if (String(len).length !== String(n).length) len = n + String(len).length;
  return Buffer.from(`${len}${body}`);
}

function octal(buf: Buffer, off: number, width: number, value: number): void {
  buf.write(`${value.toString(8).padStart(width - 1, '0')}\0`, off, width, 'latin1');
}

/** Writes one 512-byte header at `off` (the block must be zero-filled). */
function header(buf: Buffer, off: number, name: string, prefix: string, size: number, type: string): void {
  buf.write(name, off, 100, 'utf8');
  octal(buf, off + 100, 8, 0o644);
  octal(buf, off + 108, 8, 0);
  octal(buf, off + 116, 8, 0);
  octal(buf, off + 124, 12, size);
  octal(buf, off + 136, 12, 0);
  buf.write(type, off + 156, 1, 'latin1');
  buf.write('ustar\u000000', off + 257, 8, 'latin1');
  if (prefix) buf.write(prefix, off + 345, 155, 'utf8');
  // Checksum: the header's byte sum with the checksum field counted as spaces.
  let sum = 8 * 0x20;
  for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) sum += buf[off + i]!;
  buf.write(`${sum.toString(8).padStart(6, '0')}\0 `, off + 148, 8, 'latin1');
}

/** Reads exactly `size` bytes of `abs` into `buf` at `off`; a file that changed size is refused. */
function readInto(abs: string, buf: Buffer, off: number, size: number, name: string): void {
  const fd = fs.openSync(abs, 'r');
  try {
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, buf, off + got, size - got, null);
      if (n === 0) break;
      got += n;
    }
    // One byte more must not exist: the manifest declared this size.
    if (got !== size || fs.readSync(fd, Buffer.alloc(1), 0, 1, null) !== 0) {
      throw new Error(`${name} changed while it was being published (size is no longer ${size} bytes).`);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The whole archive of `files`, in order, as one buffer. */
export function tarOf(files: TarSource[]): Buffer {
  const plan = files.map((f) => {
    if (f.size > MAX_USTAR_SIZE) throw new Error(`${f.path}: too large for a tar entry.`);
    const u = ustarName(f.path);
    const pax = u ? null : paxPath(f.path);
    return { f, u, pax };
  });
  let total = 2 * BLOCK; // two zero blocks end the archive
  for (const { f, pax } of plan) total += BLOCK + padded(f.size) + (pax ? BLOCK + padded(pax.length) : 0);
  const buf = Buffer.alloc(total);
  let off = 0;
  for (const { f, u, pax } of plan) {
    if (pax) {
      // The name field of both headers holds a truncated fallback; readers use the pax path.
      header(buf, off, 'PaxHeader', '', pax.length, 'x');
      off += BLOCK;
      pax.copy(buf, off);
      off += padded(pax.length);
    }
    const fallback = Buffer.from(f.path)
      .subarray(0, 100)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
    header(buf, off, u ? u.name : fallback, u ? u.prefix : '', f.size, '0');
    off += BLOCK;
    if (f.bytes) {
      if (f.bytes.length !== f.size)
        throw new Error(`${f.path}: ${f.bytes.length} bytes, ${f.size} declared.`);
      f.bytes.copy(buf, off);
    } else if (f.size > 0) readInto(f.abs as string, buf, off, f.size, f.path);
    off += padded(f.size);
  }
  return buf;
}
