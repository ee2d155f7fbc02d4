// Worker thread of FsBlobStore batches: the many small writes and renames of a batch run here as
// plain blocking syscalls, off the event loop and without a thread-pool round trip per call.
// Plain JavaScript so it loads without the TypeScript loader.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';

/** Shard directories known to exist (never removed while the store runs). */
const dirs = new Set();

function ensureDir(dir) {
  if (!dirs.has(dir)) {
    fs.mkdirSync(dir, { recursive: true });
    dirs.add(dir);
  }
}

parentPort.on('message', (m) => {
  try {
    if (m.op === 'write') {
      const data = Buffer.from(m.data);
      let off = 0;
      for (let i = 0; i < m.files.length; i++) {
        const len = m.lengths[i];
        ensureDir(path.dirname(m.files[i]));
        fs.writeFileSync(m.files[i], data.subarray(off, off + len));
        off += len;
      }
    } else if (m.op === 'rename') {
      for (const [from, to] of m.pairs) {
        ensureDir(path.dirname(to));
        fs.renameSync(from, to);
      }
    } else if (m.op === 'fsync') {
      for (const f of m.files) {
        const fd = fs.openSync(f, 'r');
        try {
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      }
    } else if (m.op === 'remove') {
      for (const f of m.files) fs.rmSync(f, { force: true });
    } else throw new Error(`unknown op ${m.op}`);
    parentPort.postMessage({ id: m.id });
  } catch (err) {
    parentPort.postMessage({
      id: m.id,
      error: { message: String(err?.message ?? err), code: err?.code, syscall: err?.syscall },
    });
  }
});
