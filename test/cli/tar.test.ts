import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { tarOf } from '../../src/cli/tar.ts';

/** Every entry of a tar buffer, read back with tar-stream (what the server's batch upload reads). */
async function entries(buf: Buffer): Promise<Array<{ name: string; type: string; body: Buffer }>> {
  const out: Array<{ name: string; type: string; body: Buffer }> = [];
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: unknown) => parts.push(c as Buffer));
      stream.on('end', () => {
        out.push({ name: h.name, type: h.type ?? '', body: Buffer.concat(parts) });
        next();
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  Readable.from([buf]).pipe(extract);
  await done;
  return out;
}

describe('tarOf (batch upload body)', () => {
  it('writes files from disk and memory under names of any length, read back byte for byte', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-tar-'));
    const long = `${'deep/'.repeat(25)}page.html`; // 134 bytes: ustar prefix + name
    const veryLong = `${'x'.repeat(120)}/${'y'.repeat(130)}.css`; // no split fits: pax path record
    const files = [
      { path: 'index.html', bytes: Buffer.from('<h1>hi</h1>') },
      { path: 'empty.txt', bytes: Buffer.alloc(0) },
      { path: 'odd/ünïcødé €.txt', bytes: Buffer.from('unicode name') },
      { path: long, bytes: Buffer.from('long name') },
      { path: veryLong, bytes: Buffer.alloc(1500, 7) },
      { path: 'disk/block.bin', bytes: Buffer.alloc(512, 1) },
      { path: 'disk/odd.bin', bytes: Buffer.alloc(513, 2) },
    ];
    const sources = files.map((f, i) => {
      if (i < 4) return { path: f.path, size: f.bytes.length, bytes: f.bytes };
      const abs = path.join(dir, `f${i}`);
      fs.writeFileSync(abs, f.bytes);
      return { path: f.path, size: f.bytes.length, abs };
    });
    const buf = tarOf(sources);
    expect(buf.length % 512).toBe(0);
    const got = await entries(buf);
    expect(got.map((e) => e.name)).toEqual(files.map((f) => f.path));
    for (let i = 0; i < files.length; i++) {
      expect(got[i]!.type).toBe('file');
      expect(got[i]!.body.equals(files[i]!.bytes)).toBe(true);
    }
    // GNU tar reads it too (checksums, ustar prefix and pax records as the format defines them).
    const list = spawnSync('tar', ['-t', '-f', '-'], { input: buf, encoding: 'utf8' });
    if (list.status !== null && !list.error) {
      expect(list.status).toBe(0);
      expect(list.stdout.trim().split('\n')).toEqual(files.map((f) => f.path));
    }
  });

  it('refuses a file whose size changed since it was hashed, and a file that is gone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-tar-'));
    const abs = path.join(dir, 'a.txt');
    fs.writeFileSync(abs, 'now longer than declared');
    expect(() => tarOf([{ path: 'a.txt', size: 3, abs }])).toThrow(/changed while/);
    expect(() => tarOf([{ path: 'a.txt', size: 100, abs }])).toThrow(/changed while/);
    expect(() => tarOf([{ path: 'b.txt', size: 1, abs: path.join(dir, 'b.txt') }])).toThrow(/ENOENT/);
  });
});
