import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DOCS_DIR } from '../../src/domain/docs/loader.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * Issue #18, item 11: the quickstart works as written. Its shell blocks run, in order, in one bash
 * against a fresh server; the only substitutions are what a reader copies from the first start's
 * banner (the three `export` lines) and the block that starts the server.
 */
const GUIDE = path.join(DEFAULT_DOCS_DIR, 'guides/quickstart.md');
const READER_EXPORTS = /^\s*export (SPACES_API_URL|SPACES_TOKEN|SPACES_PASSWORD)=/;

interface Block {
  source: string;
  output: string;
}

function dedent(text: string): string {
  const lines = text.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

function run(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    // Asynchronous: the server under test lives in this process and must keep answering.
    const child = spawn('bash', ['-c', `set -eo pipefail\n${script}`], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

describe('docs/guides/quickstart.md', () => {
  let t: TestServer;
  let cwd: string;
  beforeAll(async () => {
    t = await startServer();
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-quickstart-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('runs every step as written against a fresh server', async () => {
    const missing = ['curl', 'jq', 'tar', 'sha256sum'].filter(
      (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
    );
    expect(missing, 'the quickstart needs these tools on the PATH').toEqual([]);

    const guide = fs.readFileSync(GUIDE, 'utf8');
    const sources = [...guide.matchAll(/^ *```sh\n([\s\S]*?)^ *```$/gm)]
      .map((m) => dedent(m[1]!))
      // The server is already running (the test started it); the reader's copies of the banner are the
      // test's values, passed in the environment.
      .filter((b) => !b.includes('npm start'))
      .map((b) =>
        b
          .split('\n')
          .filter((l) => !READER_EXPORTS.test(l))
          .join('\n'),
      );
    expect(sources.length).toBeGreaterThan(8);
    const script = sources.map((s, i) => `echo "::block ${i}::"\n${s}`).join('\n');
    const { code, out } = await run(script, cwd, {
      SPACES_API_URL: t.url,
      SPACES_TOKEN: t.ownerKey,
      SPACES_PASSWORD: t.server.bootstrap!.password,
    });
    expect(code, out).toBe(0);
    const outputs = out.split(/^::block \d+::\n/m).slice(1);
    expect(outputs).toHaveLength(sources.length);
    const blocks: Block[] = sources.map((source, i) => ({ source, output: outputs[i]! }));
    /** The output of the block whose commands contain `marker`. */
    const outputOf = (marker: string) => {
      const found = blocks.filter((b) => b.source.includes(marker));
      expect(found, marker).toHaveLength(1);
      return found[0]!.output;
    };

    expect(outputOf("jq '.data.user.email'").trim()).toBe('"owner@localhost"');
    const receipt = JSON.parse(outputOf('> receipt.json'));
    expect(receipt).toMatchObject({
      next: 'done',
      liveUrl: expect.stringMatching(/^http:\/\/[a-z0-9-]+\.localhost:\d+$/),
    });
    // Made public: the site answers anyone.
    expect(outputOf('"defaultAccess":"public"')).toBe('"public"\n"public"\n<h1>Hello from Spaces</h1>\n');
    // A second version is live, then promoting the first rolls back.
    expect(outputOf('"channel":"live"')).toBe(
      '2\n<h1>Hello, version 2</h1>\n1\n<h1>Hello from Spaces</h1>\n',
    );
    expect(outputOf('> version.json').trim()).toBe('"upload"');
    expect(JSON.parse(outputOf("jq -r '.data.next.url'"))).toMatchObject({ next: 'done' });
    expect(JSON.parse(outputOf('"name":"Acme"'))).toMatchObject({ slug: 'acme' });
    const refused = JSON.parse(outputOf('/v1/teams/acme"'));
    expect(refused.status).toBe(404);
    expect(refused.detail).toContain(`this API key belongs to team ${t.server.bootstrap!.teamSlug}`);
    expect(outputOf('ACME_KEY=').trim()).toBe('"acme"');

    // What the versions flow published is live.
    const space = await t.api('GET', '/v1/spaces/my-site');
    const site = await t.api('GET', '/', { token: null, host: `${space.body.data.space.slug}.localhost` });
    expect(space.body.data.access).toBe('public');
    expect(site.text).toBe('<h1>Hello again</h1>\n');
  }, 120_000);
});
