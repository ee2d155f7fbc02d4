/**
 * A server that dies without closing its pool (SIGKILL) leaves no workerd behind: each workerd is
 * started under `setpriv --pdeathsig KILL` (issue 26).
 */
import fs from 'node:fs';
import { request } from 'undici';
import { afterAll, expect, it } from 'vitest';
import { type ChildServer, startChildServer } from '../helpers/child-server.ts';
import { manifestOf } from '../publishing/helpers.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Child pids of a process (every thread's children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

let s: ChildServer | undefined;
afterAll(async () => {
  await s?.stop().catch(() => {});
});

it.skipIf(!fs.existsSync('/usr/bin/setpriv'))(
  'kills workerd when the server is killed',
  async () => {
    s = await startChildServer({ name: 'orphans' });
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await request(`${s!.base}${p}`, {
        method: method as 'GET',
        headers: { authorization: `Bearer ${s!.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.body.json()) as any;
    };
    const site = {
      'index.html': 'x',
      'spaces.json': JSON.stringify({ runtime: { kind: 'functions' } }),
      'handler.js': "export default { fetch: () => new Response('ok') };",
    };
    const space = (await api('POST', '/v1/spaces', { slug: 'orphan-check', access: 'public' })).data.space;
    const receipt = (await api('POST', `/v1/spaces/${space.id}/versions`, { files: manifestOf(site) })).data;
    for (const tg of receipt.upload.targets) {
      await (
        await request(tg.url, { method: 'PUT', body: (site as Record<string, string>)[tg.path] })
      ).body.text();
    }
    await api('POST', `/v1/spaces/${space.id}/versions/${receipt.version.id}/finalize`);
    const hello = await request(`${s.base}/any`, { headers: { host: 'orphan-check.localhost' } });
    expect(await hello.body.text()).toBe('ok');
    const kids = childrenOf(s.pid).filter(
      (pid) => fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'workerd',
    );
    expect(kids.length).toBe(1);
    process.kill(s.pid, 'SIGKILL');
    const until = Date.now() + 5000;
    while (kids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(kids.filter(alive)).toEqual([]);
  },
  60_000,
);
