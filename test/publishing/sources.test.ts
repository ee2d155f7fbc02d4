import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Publisher, PublishOutcome } from '../../src/domain/publishing/publish.ts';
import { directorySource, type FileSource } from '../../src/domain/publishing/sources.ts';
import { ApiError } from '../../src/errors/problem.ts';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

/**
 * The in-process entry builds and `git push` use: `Publisher.publishFiles(principal, target,
 * source)` with a directory as the source, against the real server (its store, blobs and edge).
 */
describeEachDb('publishFiles from a directory (in-process)', (db) => {
  let t: TestServer;
  let publisher: Publisher;
  let dir: string;

  beforeAll(async () => {
    t = await startServer({ db });
    publisher = t.server.services.publisher;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dir-source-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const owner = () => t.server.services.credentials.resolve(t.ownerKey);
  const present = async (o: PublishOutcome) => ({ status: o.noop ? 200 : 201, body: o });
  const publish = async (target: object, source: FileSource) =>
    (await publisher.publishFiles(await owner(), target, source, { clientIp: null, present })).answer
      .body as PublishOutcome;

  it('publishes every file under a directory, nested paths included, and the site serves it', async () => {
    const site = path.join(dir, 'site');
    fs.mkdirSync(path.join(site, 'docs/deep'), { recursive: true });
    fs.writeFileSync(path.join(site, 'index.html'), '<h1>from a directory</h1>');
    fs.writeFileSync(path.join(site, 'docs/deep/page.html'), 'deep page');
    fs.writeFileSync(path.join(site, '_redirects'), '/old /docs/deep/page.html 301\n');
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `dir-${Date.now().toString(36)}`, access: 'public' },
    });
    expect(created.status).toBe(201);
    const space = created.body.data.space;

    const out = await publish({ spaceId: space.id, message: 'built' }, directorySource(site));
    expect(out.space.id).toBe(space.id);
    expect(out.created).toBe(false);
    expect(out.version).toMatchObject({ status: 'ready', file_count: 3, message: 'built' });
    expect(JSON.parse(out.version.source!)).toEqual({ type: 'directory' });

    const home = await t.api('GET', '/', { token: null, host: `${space.slug}.localhost` });
    expect(home.status).toBe(200);
    expect(home.text).toBe('<h1>from a directory</h1>');
    const deep = await t.api('GET', '/docs/deep/page', { token: null, host: `${space.slug}.localhost` });
    expect(deep.text).toBe('deep page');
    const moved = await t.api('GET', '/old', { token: null, host: `${space.slug}.localhost` });
    expect(moved.status).toBe(301);

    // The same directory again is a no-op: identical content to live.
    const again = await publish({ spaceId: space.id }, directorySource(site));
    expect(again.noop).toBe(true);
    expect(again.version.id).toBe(out.version.id);
  });

  it('refuses a symbolic link by name and publishes nothing (no way out of the directory)', async () => {
    const site = path.join(dir, 'linked');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), 'ok');
    fs.symlinkSync('/etc/passwd', path.join(site, 'passwd'));
    const created = await t.api('POST', '/v1/spaces', {
      body: { slug: `lnk-${Date.now().toString(36)}`, access: 'public' },
    });
    const space = created.body.data.space;
    const err = await publish({ spaceId: space.id }, directorySource(site)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('invalid_publish_path');
    expect((err as ApiError).extras.details).toMatchObject({ path: 'passwd' });
    const versions = await t.api('GET', `/v1/spaces/${space.id}/versions`);
    expect(versions.body.data).toEqual([]);
  });

  it('makes a new space for the principal when the target names none', async () => {
    const site = path.join(dir, 'fresh');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), 'fresh');
    const out = await publish({ title: 'Made by a build', access: 'public' }, directorySource(site));
    expect(out.created).toBe(true);
    expect(out.space.title).toBe('Made by a build');
    const live = await t.api('GET', '/', { token: null, host: `${out.space.slug}.localhost` });
    expect(live.text).toBe('fresh');
  });
});
