import { fileURLToPath } from 'node:url';
import { FsBlobStore } from './fs.ts';
import type { BlobStore } from './port.ts';

/** Picks the blob store from `SPACES_BLOB_URL`. */
export async function openBlobStore(blobUrl: string): Promise<BlobStore> {
  if (blobUrl.startsWith('file://')) return new FsBlobStore(fileURLToPath(new URL(blobUrl)));
  if (blobUrl.startsWith('s3://')) {
    const { S3BlobStore } = await import('./s3.ts');
    return S3BlobStore.fromUrl(blobUrl);
  }
  throw new Error(`unsupported blob URL: ${blobUrl}`);
}
