/**
 * Publish from the browser through the versions flow: pick or drop a folder, hash every file in a
 * Web Worker, send the manifest (`POST …/versions`), upload only the files the server asks for, then
 * finalize. Progress in files and bytes; cancel stops hashing and uploads (the unfinished version
 * is left `uploading` and expires on its own). A single dropped .zip or .tar.gz is published as an
 * archive instead (publish-archive.ts), with upload progress in bytes.
 */
import { useRef, useState } from 'preact/hooks';
import { api, must, ProblemError, type Space, type Version } from '../api/client';
import { bytes, ProblemView, useAction } from '../ui';
import { ARCHIVE_NAME, uploadArchive } from './publish-archive';

type Picked = { path: string; file: File };
type Phase = 'idle' | 'hashing' | 'uploading' | 'finalizing' | 'done';

/** Drops the folder's own name: `site/index.html` → `index.html`. */
function relative(files: File[]): Picked[] {
  const paths = files.map((f) => (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name);
  const top = paths[0]?.includes('/') ? paths[0].split('/')[0] : null;
  const allUnder = top !== null && paths.every((p) => p.startsWith(`${top}/`));
  return files.map((file, i) => ({ path: allUnder ? paths[i]!.slice(top!.length + 1) : paths[i]!, file }));
}

async function readEntry(entry: FileSystemEntry, prefix: string, out: Picked[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    out.push({ path: prefix + entry.name, file });
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const e of batch) await readEntry(e, `${prefix}${entry.name}/`, out);
    }
  }
}

/** A dropped folder (its contents) or dropped files. */
async function droppedFiles(dt: DataTransfer): Promise<Picked[]> {
  const entries = [...dt.items].map((i) => i.webkitGetAsEntry()).filter((e): e is FileSystemEntry => !!e);
  // Files without entries (dropped from another page or made by a script): just the files.
  if (!entries.length) return [...dt.files].map((file) => ({ path: file.name, file }));
  if (entries.length === 1 && entries[0]!.isDirectory) {
    const out: Picked[] = [];
    await readEntry(entries[0]!, '', out);
    const top = `${entries[0]!.name}/`;
    return out.map((p) => ({ ...p, path: p.path.slice(top.length) }));
  }
  const out: Picked[] = [];
  for (const e of entries) await readEntry(e, '', out);
  return out;
}

function hashAll(
  files: File[],
  signal: AbortSignal,
  onOne: (i: number, sha: string) => void,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('../hash-worker.ts', import.meta.url), { type: 'module' });
    const out: string[] = new Array(files.length);
    const stop = () => {
      worker.terminate();
      reject(new DOMException('Canceled', 'AbortError'));
    };
    signal.addEventListener('abort', stop, { once: true });
    worker.onmessage = (e: MessageEvent<{ index?: number; sha256?: string; done?: boolean }>) => {
      if (e.data.done) {
        signal.removeEventListener('abort', stop);
        worker.terminate();
        resolve(out);
      } else {
        out[e.data.index!] = e.data.sha256!;
        onOne(e.data.index!, e.data.sha256!);
      }
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(e.message));
    };
    worker.postMessage({ id: 1, files });
  });
}

export function PublishPanel({ space, onPublished }: { space: Space; onPublished: () => void }) {
  const [picked, setPicked] = useState<Picked[]>([]);
  const [phase, setPhase] = useState<Phase>('idle');
  const [progress, setProgress] = useState({ files: 0, totalFiles: 0, bytes: 0, totalBytes: 0 });
  const [receipt, setReceipt] = useState<{
    version: Version;
    uploaded: number;
    reused: number;
    noop: boolean;
  } | null>(null);
  const [message, setMessage] = useState('');
  const [over, setOver] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const act = useAction();
  const totalBytes = picked.reduce((n, p) => n + p.file.size, 0);
  const archive = picked.length === 1 && ARCHIVE_NAME.test(picked[0]!.path) ? picked[0]!.file : null;

  const publishArchive = async (file: File, ctl: AbortController) => {
    setPhase('uploading');
    setProgress({ files: 0, totalFiles: 1, bytes: 0, totalBytes: file.size });
    const data = await uploadArchive(space.id, file, message.trim() || null, ctl.signal, (sent, total) => {
      setProgress({ files: sent >= total ? 1 : 0, totalFiles: 1, bytes: sent, totalBytes: total });
      // All bytes sent: the server unpacks and publishes.
      if (sent >= total) setPhase('finalizing');
    });
    setReceipt({ version: data.version, uploaded: data.version.fileCount, reused: 0, noop: data.noop });
    setPhase('done');
    if (!data.noop) onPublished();
  };

  const choose = (list: Picked[]) => {
    setPicked(
      list.filter((p) => p.path && !p.path.split('/').some((s) => s === '.git' || s === '.DS_Store')),
    );
    setReceipt(null);
    setPhase('idle');
    act.setProblem(null);
  };

  const publish = () =>
    act.run(async () => {
      const ctl = new AbortController();
      abort.current = ctl;
      setReceipt(null);
      try {
        if (archive) return await publishArchive(archive, ctl);
        setPhase('hashing');
        setProgress({ files: 0, totalFiles: picked.length, bytes: 0, totalBytes });
        let hashedBytes = 0;
        let hashed = 0;
        const shas = await hashAll(
          picked.map((p) => p.file),
          ctl.signal,
          (i) => {
            hashed++;
            hashedBytes += picked[i]!.file.size;
            setProgress({ files: hashed, totalFiles: picked.length, bytes: hashedBytes, totalBytes });
          },
        );
        const files = picked.map((p, i) => ({ path: p.path, sha256: shas[i]!, size: p.file.size }));
        const created = must(
          await api.POST('/v1/spaces/{spaceId}/versions', {
            params: { path: { spaceId: space.id } },
            body: { files, target: 'production', message: message.trim() || null },
            signal: ctl.signal,
          }),
        ).data;
        if (created.noop) {
          setReceipt({ version: created.version, uploaded: 0, reused: files.length, noop: true });
          setPhase('done');
          return;
        }
        const targets = created.upload.targets;
        const bySha = new Map(files.map((f, i) => [f.sha256, picked[i]!.file]));
        const upBytes = targets.reduce((n, t) => n + t.size, 0);
        setPhase('uploading');
        setProgress({ files: 0, totalFiles: targets.length, bytes: 0, totalBytes: upBytes });
        let done = 0;
        let sent = 0;
        for (const t of targets) {
          const u = new URL(t.url);
          // Same server as this page: the target's path on this origin (the signed path is the credential).
          const res = await fetch(u.pathname + u.search, {
            method: 'PUT',
            body: bySha.get(t.sha256)!,
            signal: ctl.signal,
          });
          if (!res.ok) throw new ProblemError(await res.json());
          done++;
          sent += t.size;
          setProgress({ files: done, totalFiles: targets.length, bytes: sent, totalBytes: upBytes });
        }
        setPhase('finalizing');
        const fin = must(
          await api.POST('/v1/spaces/{spaceId}/versions/{versionId}/finalize', {
            params: { path: { spaceId: space.id, versionId: created.version.id } },
            signal: ctl.signal,
          }),
        );
        setReceipt({
          version: fin.data.version,
          uploaded: targets.length,
          reused: files.length - targets.length,
          noop: false,
        });
        setPhase('done');
        onPublished();
      } catch (err) {
        setPhase('idle');
        if ((err as Error).name === 'AbortError') return;
        throw err;
      } finally {
        abort.current = null;
      }
    });

  const busy = phase === 'hashing' || phase === 'uploading' || phase === 'finalizing';
  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (e.dataTransfer) choose(await droppedFiles(e.dataTransfer));
  };

  return (
    <section aria-labelledby="publish-h">
      <h2 id="publish-h">Publish a new version</h2>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping is the mouse's shortcut; the two file choosers inside are the keyboard's way. */}
      <div
        class={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>Drop a folder, a .zip or a .tar.gz here, or choose one:</p>
        <label for="folder" class="button">
          Choose a folder
        </label>
        <input
          id="folder"
          class="file-input"
          type="file"
          multiple
          {...{ webkitdirectory: true }}
          onChange={(e) => choose(relative([...(e.currentTarget.files ?? [])]))}
        />{' '}
        <label for="files" class="button">
          Choose files
        </label>
        <input
          id="files"
          class="file-input"
          type="file"
          multiple
          onChange={(e) => choose(relative([...(e.currentTarget.files ?? [])]))}
        />
      </div>
      {archive ? (
        <p id="picked">
          Archive {archive.name}, {bytes(archive.size)}: the server unpacks it and publishes its files
        </p>
      ) : picked.length ? (
        <p id="picked">
          {picked.length} files, {bytes(totalBytes)}
          {picked.some((p) => p.path === 'index.html') ? '' : ' (no index.html at the top)'}
        </p>
      ) : null}
      <div class="field">
        <label for="message">Message (optional)</label>
        <input id="message" value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      </div>
      <button type="button" class="primary" id="publish" disabled={!picked.length || busy} onClick={publish}>
        Publish {archive ? 'the archive' : picked.length ? `${picked.length} files` : ''}
      </button>
      {busy ? (
        <button type="button" id="cancel-publish" onClick={() => abort.current?.abort()}>
          Cancel
        </button>
      ) : null}
      {busy ? (
        <div class="progress" aria-live="polite">
          <label for="publish-progress">
            {phase === 'hashing' ? 'Hashing' : phase === 'uploading' ? 'Uploading' : 'Finalizing'}:{' '}
            {progress.files}/{progress.totalFiles} files, {bytes(progress.bytes)} of{' '}
            {bytes(progress.totalBytes)}
          </label>
          <progress
            id="publish-progress"
            max={progress.totalBytes || 1}
            value={phase === 'finalizing' ? undefined : progress.bytes}
          />
        </div>
      ) : null}
      <ProblemView problem={act.problem} id="publish-error" />
      {receipt ? (
        <div class="card receipt" id="receipt" role="status">
          <h3>{receipt.noop ? 'Nothing changed' : `Published v${receipt.version.number}`}</h3>
          <p>
            {receipt.noop
              ? 'The files are identical to the live version; nothing was created.'
              : archive
                ? `${receipt.uploaded} files from ${archive.name}.`
                : `${receipt.uploaded} files uploaded, ${receipt.reused} already on the server.`}
          </p>
          <p>
            <a href={space.liveUrl} rel="noopener" target="_blank" id="receipt-url">
              {space.liveUrl}
            </a>{' '}
            ·{' '}
            <a href={receipt.version.immutableUrl} rel="noopener" target="_blank">
              this version’s own address
            </a>
          </p>
        </div>
      ) : null}
    </section>
  );
}
