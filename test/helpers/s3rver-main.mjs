// Runs s3rver in its own process: `node --openssl-legacy-provider s3rver-main.mjs <dir> <bucket>`.
// s3rver's ListObjectsV2 continuation tokens use DES, which OpenSSL 3 only offers in its legacy
// provider — hence a child process with that flag rather than s3rver inside the test process.
// Prints `{"port":N}` once listening; exits when stdin closes (the parent went away).
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import S3rver from 's3rver';

// S3 gives an object copied onto itself (MetadataDirective REPLACE) a new LastModified — the blob
// stores freshen blobs that way. s3rver only rewrites the metadata and reports the object file's
// mtime, so the copy touches that file here, as S3 would.
const FilesystemStore = createRequire(import.meta.url)('s3rver/lib/stores/filesystem.js');
const copyObject = FilesystemStore.prototype.copyObject;
FilesystemStore.prototype.copyObject = async function (srcBucket, srcKey, destBucket, destKey, metadata) {
  if (srcBucket === destBucket && srcKey === destKey) {
    const now = new Date();
    await fs.utimes(this.getResourcePath(destBucket, destKey, 'object'), now, now);
  }
  return copyObject.call(this, srcBucket, srcKey, destBucket, destKey, metadata);
};

// s3rver's deleteObject removes the directories a delete leaves empty (S3 has no directories). That
// races with a put into the same directory: putObject makes the directory, the delete removes it,
// then the put's write stream fails with ENOENT as an unhandled stream error and the whole server
// dies (every later request: ECONNREFUSED). The blob stores write and delete `tmp/<sha>.<random>`
// for every put, so parallel puts (a publish) hit it. Here a delete removes the object's files and
// leaves the directories: empty ones are invisible to listings, as in S3.
FilesystemStore.prototype.deleteObject = async function (bucketName, key) {
  await Promise.all(
    ['object', 'object.md5', 'metadata.json'].map((kind) =>
      fs.unlink(this.getResourcePath(bucketName, key, kind)).catch((err) => {
        if (err.code !== 'ENOENT') throw err;
      }),
    ),
  );
};

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  process.exit(0);
});
