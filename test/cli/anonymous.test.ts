import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type CliEnv, cli, cliEnv, writeSite } from './helpers.ts';

let t: TestServer;
let e: CliEnv;

beforeAll(async () => {
  t = await startServer();
  e = cliEnv(t.url);
  writeSite(path.join(e.cwd, 'site'), 5);
});
afterAll(async () => {
  await t.close();
});

describe('anonymous spaces from the CLI', () => {
  it('first publish without a credential creates an anonymous space and prints the claim link', async () => {
    const r = await cli(e, ['publish', 'site', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.claim.claimUrl).toMatch(/^http/);
    expect(out.siteUrl).toBe(out.space.liveUrl);
    // The published directory keeps the link and the space key.
    const stateFile = path.join(e.cwd, 'site', '.spaces', 'state.json');
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    expect(state.spaceKey).toMatch(/^sfc_/);
    expect(fs.statSync(stateFile).mode & 0o777).toBe(0o600);
    const human = await cli({ ...e, cwd: path.join(e.cwd, 'site') }, ['status']);
    expect(human.stdout).toContain(out.claim.claimUrl);
  });

  it('publishes to a linked anonymous space with its space key, then `spaces claim` moves it to a team', async () => {
    const root = cliEnv(t.url);
    writeSite(path.join(root.cwd, 'site'), 20);
    // Working in the site's directory: publish (no path), claim and status all use its link.
    const e2 = { ...root, cwd: path.join(root.cwd, 'site') };
    const { space, key } = await t.server.services.anonymous.createSpace(null, { title: 'anon' });
    fs.mkdirSync(path.join(e2.cwd, '.spaces'));
    fs.writeFileSync(
      path.join(e2.cwd, '.spaces', 'state.json'),
      JSON.stringify({ apiUrl: t.url, spaceId: space.id, slug: space.slug, liveUrl: 'x', spaceKey: key }),
    );

    // No login: the space key kept in the project's state is the credential.
    const pub = await cli(e2, ['publish', '--json']);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.json().space.id).toBe(space.id);
    // Blobs are shared server-wide: files the first test already stored are not uploaded again.
    expect(pub.json().uploaded.files).toBeGreaterThan(0);
    expect(pub.json().uploaded.files).toBeLessThanOrEqual(20);

    // Claiming needs a person.
    const anon = await cli(e2, ['spaces', 'claim']);
    expect(anon.code).toBe(3);

    const login = await cli(e2, ['login', '--token', t.ownerKey]);
    expect(login.code, login.stderr).toBe(0);
    // Logged in but not yet claimed: the kept space key still reaches the space.
    fs.writeFileSync(path.join(e2.cwd, 'index.html'), '<h1>changed</h1>');
    const again1 = await cli(e2, ['publish', '--json']);
    expect(again1.code, again1.stderr).toBe(0);
    expect(again1.json().uploaded.files).toBe(1);
    const claim = await cli(e2, ['spaces', 'claim', '--json']);
    expect(claim.code, claim.stderr).toBe(0);
    expect(claim.json().space.anonymous).toBe(false);
    const state = JSON.parse(fs.readFileSync(path.join(e2.cwd, '.spaces', 'state.json'), 'utf8'));
    expect(state.spaceKey).toBeUndefined();
    expect(state.spaceId).toBe(space.id);

    // The key is spent: using it again is refused.
    const again = await cli(e2, ['spaces', 'claim', '--key', key]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/code: (invalid_claim_token|space_already_claimed)/);
  });
});
