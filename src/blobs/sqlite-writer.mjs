// Worker thread of InlineBlobStore on SQLite: writes a batch's inline blobs with its own connection, so
// the inserts, the WAL sync at commit and any checkpoint run off the event loop. The main thread holds
// its own connection's lock while a write runs here (see inline.ts), so the two never interleave a
// transaction. Plain JavaScript so it loads without the TypeScript loader.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
// FULL: the batch's rows are on disk when `commit` answers, even across power loss.
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const insert = db.prepare(
  'insert into blob_data (sha256, data, created_at) values (?, ?, ?) ' +
    'on conflict (sha256) do update set created_at = excluded.created_at',
);
// The publishing index's upsert (recordBlobs in src/domain/publishing/ingest.ts).
const record = db.prepare(
  'insert into blobs (sha256, size, variants, created_at, used_at) values (?, ?, ?, ?, ?) ' +
    'on conflict (sha256) do update set variants = coalesce(blobs.variants, excluded.variants), ' +
    'used_at = excluded.used_at',
);
const write = db.transaction((m) => {
  const data = Buffer.from(m.data);
  let off = 0;
  for (let i = 0; i < m.shas.length; i++) {
    insert.run(m.shas[i], data.subarray(off, off + m.lengths[i]), m.now);
    off += m.lengths[i];
  }
  for (const [sha256, size, variants] of m.records ?? [])
    record.run(sha256, size, variants, m.recordedAt, m.recordedAt);
});

parentPort.on('message', (m) => {
  try {
    if (m.op === 'write') write.immediate(m);
    else if (m.op === 'close') {
      db.close();
    } else throw new Error(`unknown op ${m.op}`);
    parentPort.postMessage({ id: m.id });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: { message: String(err?.message ?? err), code: err?.code } });
  }
});
