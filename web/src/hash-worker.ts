/// <reference lib="webworker" />
/**
 * Hashes files off the main thread: receives `{ id, files: File[] }`, answers one
 * `{ id, index, sha256, size }` per file as it goes, then `{ id, done: true }`.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (e: MessageEvent<{ id: number; files: File[] }>) => {
  const { id, files } = e.data;
  for (let index = 0; index < files.length; index++) {
    const f = files[index]!;
    const digest = await crypto.subtle.digest('SHA-256', await f.arrayBuffer());
    const sha256 = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
    scope.postMessage({ id, index, sha256, size: f.size });
  }
  scope.postMessage({ id, done: true });
};
