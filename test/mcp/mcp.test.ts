import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { describeEachDb, startServer, type TestServer } from '../helpers/server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/spaces.mjs');

type ToolAnswer = {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: any;
};

async function httpClient(t: TestServer, token: string): Promise<Client> {
  const client = new Client({ name: 'spaces-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as ToolAnswer;

/** The live site's `/` as a visitor gets it (the site's hostname on the same listener). */
async function liveText(t: TestServer, liveUrl: string, p = '/'): Promise<string> {
  const host = new URL(liveUrl).hostname;
  const res = await t.api('GET', p, { token: null, host });
  expect(res.status).toBe(200);
  return res.text;
}

describeEachDb('MCP server', (db) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer({ db });
  });
  afterAll(() => t?.close());

  it('refuses a call without a credential with the resource-metadata hint, and serves that metadata', async () => {
    const res = await t.api('POST', '/v1/mcp', {
      token: null,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(401);
    const challenge = String(res.headers['www-authenticate']);
    expect(challenge).toMatch(/^Bearer realm="spaces"/);
    const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    const origin = new URL(url!).origin;
    expect(url).toBe(`${origin}/.well-known/oauth-protected-resource/v1/mcp`);
    const meta = await t.api('GET', new URL(url!).pathname, { token: null });
    expect(meta.status).toBe(200);
    expect(meta.body.resource).toBe(`${origin}/v1/mcp`);
    expect(meta.body.authorization_servers).toEqual([origin]);
    expect(meta.body.scopes_supported).toContain('publish:write');
    const as = await t.api('GET', '/.well-known/oauth-authorization-server', { token: null });
    expect(as.body.issuer).toBe(origin);
    // A refused token gets the hint too.
    const bad = await t.api('POST', '/v1/mcp', {
      token: 'sfa_nope',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(bad.status).toBe(401);
    expect(String(bad.headers['www-authenticate'])).toContain('resource_metadata=');
    // The SDK's own client sees the 401 as an auth failure.
    const client = new Client({ name: 'anon', version: '1.0.0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/v1/mcp`))),
    ).rejects.toThrow();
  });

  it('over Streamable HTTP: lists tools, publishes, reads the site back, rolls back, refuses a bad config', async () => {
    const c = await httpClient(t, t.ownerKey);
    onTestFinished(() => c.close());
    const { tools } = await c.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    for (const name of [
      'publish_files',
      'list_spaces',
      'get_space',
      'list_versions',
      'get_version',
      'diff_versions',
      'promote_version',
      'rollback',
      'delete_space',
      'get_diagnostics',
      'get_config',
      'set_config',
      'search_docs',
    ])
      expect(byName.has(name), name).toBe(true);
    // publish_folder reads the local disk: stdio only.
    expect(byName.has('publish_folder')).toBe(false);
    // Schemas are the API's (TypeBox → OpenAPI): the inline publish body, the path parameters.
    const publishSchema = byName.get('publish_files')!.inputSchema as any;
    expect(publishSchema.required).toEqual(['files']);
    expect(publishSchema.properties.files.items.properties.encoding.anyOf).toBeDefined();
    expect((byName.get('diff_versions')!.inputSchema as any).required).toEqual(
      expect.arrayContaining(['spaceId', 'versionId', 'against']),
    );
    expect(byName.get('rollback')!.annotations?.destructiveHint).toBe(true);
    expect(byName.get('delete_space')!.annotations?.destructiveHint).toBe(true);
    expect(byName.get('list_spaces')!.annotations?.readOnlyHint).toBe(true);

    const first = await call(c, 'publish_files', {
      title: 'MCP over HTTP',
      files: [{ path: 'index.html', content: '<h1>one</h1>' }],
    });
    expect(first.isError, first.content[0]?.text).toBeFalsy();
    const receipt = first.structuredContent;
    expect(receipt.space.liveUrl).toMatch(/^http/);
    expect(receipt.version.immutableUrl).toMatch(/^http/);
    // The owner's team keeps new spaces private; this one is opened to visitors (inline publishes
    // take no access level).
    const open = await t.api('PATCH', `/v1/spaces/${receipt.space.id}`, { body: { access: 'public' } });
    expect(open.status).toBe(200);
    expect(await liveText(t, receipt.space.liveUrl)).toContain('<h1>one</h1>');

    const second = await call(c, 'publish_files', {
      spaceId: receipt.space.id,
      files: [{ path: 'index.html', content: '<h1>two</h1>' }],
    });
    expect(second.isError, second.content[0]?.text).toBeFalsy();
    expect(await liveText(t, receipt.space.liveUrl)).toContain('<h1>two</h1>');

    const diff = await call(c, 'diff_versions', {
      spaceId: receipt.space.id,
      versionId: second.structuredContent.version.id,
      against: receipt.version.id,
    });
    expect(diff.structuredContent.changed).toEqual(['index.html']);

    const back = await call(c, 'rollback', { spaceId: receipt.space.id });
    expect(back.isError, back.content[0]?.text).toBeFalsy();
    expect(back.structuredContent.versionId).toBe(receipt.version.id);
    expect(await liveText(t, receipt.space.liveUrl)).toContain('<h1>one</h1>');

    const versions = await call(c, 'list_versions', { spaceId: receipt.space.id });
    expect(versions.structuredContent.data).toHaveLength(2);

    // Config: read, then an invalid one is refused with the pointer inside it.
    const cfg = await call(c, 'get_config', { spaceId: receipt.space.id });
    expect(cfg.structuredContent.settingsDigest).toMatch(/^[0-9a-f]{64}$/);
    const bad = await call(c, 'set_config', {
      spaceId: receipt.space.id,
      config: { redirects: [{ source: '/a', destination: '/b', status: 999 }] },
    });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.problem.code).toBe('validation_error');
    expect(bad.structuredContent.problem.pointer).toMatch(/^\/config\/redirects\/0/);
    expect(bad.content[0]!.text).toContain('pointer: /config/redirects/0');
    const good = await call(c, 'set_config', {
      spaceId: receipt.space.id,
      config: { redirects: [{ source: '/old', destination: '/', status: 301 }] },
      baseSettingsDigest: cfg.structuredContent.settingsDigest,
    });
    expect(good.isError, good.content[0]?.text).toBeFalsy();
    expect(good.structuredContent.config.redirects).toHaveLength(1);

    const missing = await call(c, 'get_space', { spaceId: 'no-such-space' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/^Not found: /);

    const docs = await call(c, 'search_docs', { q: 'rollback' });
    expect(docs.structuredContent.results.length).toBeGreaterThan(0);
    const { resources } = await c.listResources();
    const llmsUri = resources.find((r) => r.name === 'llms.txt')?.uri;
    expect(llmsUri).toMatch(/^http:\/\/[^/]+\/llms\.txt$/);
    const llms = await c.readResource({ uri: llmsUri! });
    expect((llms.contents[0] as { text: string }).text).toMatch(/^# Spaces/);
    const page = resources.find((r) => r.uri.endsWith('.md'))!;
    const read = await c.readResource({ uri: page.uri });
    expect((read.contents[0] as { text: string }).text).toMatch(/^# /);
    await c.close();
  });

  it('over stdio (`spaces mcp`): publishes a folder with the stored credential and rolls back', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-mcp-'));
    const site = path.join(root, 'site');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), '<p>folder one</p>');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: root,
        SPACES_CONFIG_DIR: path.join(root, 'config'),
        SPACES_API_URL: t.url,
        SPACES_TOKEN: t.ownerKey,
        ...(process.env.SPACES_CLI_BUNDLE_DIR
          ? { SPACES_CLI_BUNDLE_DIR: process.env.SPACES_CLI_BUNDLE_DIR }
          : {}),
      },
      stderr: 'pipe',
    });
    const c = new Client({ name: 'spaces-test', version: '1.0.0' });
    await c.connect(transport);
    try {
      const { tools } = await c.listTools();
      expect(tools.map((x) => x.name)).toEqual(expect.arrayContaining(['publish_folder', 'rollback']));
      const one = await call(c, 'publish_folder', { path: 'site', slug: 'mcp-stdio', access: 'public' });
      expect(one.isError, one.content[0]?.text).toBeFalsy();
      expect(one.structuredContent.siteUrl).toMatch(/^http/);
      expect(one.structuredContent.immutableUrl).toMatch(/^http/);
      expect(await liveText(t, one.structuredContent.siteUrl)).toContain('folder one');
      fs.writeFileSync(path.join(site, 'index.html'), '<p>folder two</p>');
      const two = await call(c, 'publish_folder', { path: 'site' });
      expect(two.isError, two.content[0]?.text).toBeFalsy();
      expect(two.structuredContent.space.id).toBe(one.structuredContent.space.id);
      expect(await liveText(t, one.structuredContent.siteUrl)).toContain('folder two');
      const back = await call(c, 'rollback', { spaceId: 'mcp-stdio' });
      expect(back.isError, back.content[0]?.text).toBeFalsy();
      expect(await liveText(t, one.structuredContent.siteUrl)).toContain('folder one');
      const bad = await call(c, 'set_config', { spaceId: 'mcp-stdio', config: { headers: 'nope' } });
      expect(bad.isError).toBe(true);
      expect(bad.structuredContent.problem.pointer).toMatch(/^\/config\/headers/);
    } finally {
      await c.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('over stdio without a credential: an anonymous publish answers the claim', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-mcp-anon-'));
    fs.mkdirSync(path.join(root, 'site'));
    fs.writeFileSync(path.join(root, 'site', 'index.html'), '<p>anonymous</p>');
    const c = new Client({ name: 'spaces-test', version: '1.0.0' });
    await c.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp'],
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: root,
          SPACES_CONFIG_DIR: path.join(root, 'config'),
          SPACES_API_URL: t.url,
        },
        stderr: 'pipe',
      }),
    );
    try {
      const r = await call(c, 'publish_folder', { path: 'site' });
      expect(r.isError, r.content[0]?.text).toBeFalsy();
      expect(r.structuredContent.claim.claimUrl).toMatch(/^http/);
      expect(r.structuredContent.claim.expiresAt).toBeTruthy();
      // Until claimed, visitors get the notice; the publisher's own door is `openUrl`.
      expect(await liveText(t, r.structuredContent.siteUrl)).toContain('not claimed yet');
      expect(r.structuredContent.claim.openUrl).toMatch(/^http/);
      // The folder is linked with the space key: reads of that space work without a person.
      const space = await call(c, 'get_space', { spaceId: r.structuredContent.space.id });
      expect(space.isError, space.content[0]?.text).toBeFalsy();
    } finally {
      await c.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
