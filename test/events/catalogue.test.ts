import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CATALOGUE_CODES, EMITTED_CODES } from '../../src/domain/events/catalogue.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';
import { createUser, describeEachDb, startServer, type TestServer } from '../helpers/server.ts';
import { manifestOf, publishViaVersions } from '../publishing/helpers.ts';

/**
 * The event catalogue (behaviour §14), code by code: every code the product records today is
 * triggered through the API (or the job that records it) and must produce exactly one event with
 * the right tenant, space, actor and details; every other code says why it can't happen yet. The
 * table must cover the whole catalogue and every code the emitter lists (`EMITTED_CODES`).
 */

interface Ctx {
  t: TestServer;
  dns: TestDns;
  /** A person with a personal team (the tenant of most rows). */
  u: { token: string; userId: string; email: string; teamId: string };
  /** A space of that team with two published versions (v1, v2 live). */
  space: { id: string; slug: string; publicName: string };
  v1: string;
  dir: string;
}

/** What a trigger made: where its event must be, and what it must say. */
interface Expect {
  tenantId: string;
  spaceId?: string | null;
  actor?: { type: string; id?: string | null };
  details?: Record<string, unknown>;
}

type Row = { trigger: (c: Ctx) => Promise<Expect> } | { notYet: string };

const HOUR = 3600_000;
let seq = 0;
const uniq = () => `${Date.now().toString(36)}${seq++}`;

async function newSpace(c: Ctx) {
  const r = await c.t.api('POST', '/v1/spaces', { token: c.u.token, body: { teamId: c.u.teamId } });
  expect(r.status, r.text).toBe(201);
  return r.body.data.space as { id: string; slug: string };
}

async function newDomain(c: Ctx, extra: object = {}) {
  const r = await c.t.api('POST', '/v1/domains', {
    token: c.u.token,
    body: { hostname: `d${uniq()}.example.test`, team: c.u.teamId, ...extra },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.data as { id: string; hostname: string; records: Array<{ purpose: string; value: string }> };
}

/** A public grant on /a/** of the context's space. */
async function newGrant(c: Ctx) {
  const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/grants`, {
    token: c.u.token,
    body: { audience: { type: 'public' }, paths: ['/a/**'] },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.data as { id: string };
}

async function newShareLink(c: Ctx) {
  const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/share-links`, { token: c.u.token, body: {} });
  expect(r.status, r.text).toBe(201);
  return r.body.data as { id: string };
}

/**
 * A visitor's request, confirmed by the link in its e-mail (read from the outbox row or, once the
 * worker sent it, from the `.eml` file the default sender wrote).
 */
async function confirmedRequest(c: Ctx, email: string): Promise<{ id: string }> {
  const services = c.t.server.services;
  const row = (await services.store.repos.spaces.byId(c.space.id))!;
  await services.people.request(row, { email, path: '/' });
  const re = /token=(sprq_[A-Za-z0-9_-]+)/;
  const end = Date.now() + 15_000;
  let token: string | undefined;
  while (!token) {
    const queued = await services.store.repos.mailOutbox.listTo(services.mainTenantId, email, 5);
    token = queued.map((m) => re.exec(m.text_body ?? '')?.[1]).find(Boolean);
    const dir = path.join(c.t.dataDir, 'mail');
    for (const n of !token && fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      const text = fs
        .readFileSync(path.join(dir, n), 'utf8')
        .replace(/=\r?\n/g, '')
        .replace(/=3D/g, '=');
      if (text.includes(email)) token ??= re.exec(text)?.[1];
    }
    if (!token) {
      if (Date.now() > end) throw new Error('no confirmation e-mail');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const confirmed = await services.people.confirmByToken(token);
  expect(confirmed?.status).toBe('pending');
  return { id: confirmed!.id };
}

/** A webhook of the person's team, listening for an event that never happens here (no deliveries). */
async function newWebhook(c: Ctx) {
  const r = await c.t.api('POST', '/v1/webhooks', {
    token: c.u.token,
    body: { team: c.u.teamId, url: 'http://127.0.0.1:9/hook', events: ['space.transferred'] },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.data as { id: string };
}

async function verifiedDomain(c: Ctx) {
  const d = await newDomain(c, { spaceId: c.space.id });
  const txt = d.records.find((r) => r.purpose === 'ownership')!;
  c.dns.set(`_spaces-challenge.${d.hostname}`, 'TXT', [txt.value]);
  c.dns.set(d.hostname, 'CNAME', [`${c.space.publicName}.spaces.example.test`]);
  const v = await c.t.api('POST', `/v1/domains/${d.id}/verify`, { token: c.u.token });
  expect(v.body.data.status, v.text).toBe('verified');
  return d;
}

async function uploadBuild(c: Ctx, spaceId: string, files: Record<string, string>) {
  const created = await c.t.api('POST', `/v1/spaces/${spaceId}/builds`, {
    token: c.u.token,
    body: { source: { type: 'upload' } },
  });
  expect(created.status, created.text).toBe(201);
  if (Object.keys(files).length === 0) return created.body.data.id as string;
  const src = fs.mkdtempSync(path.join(c.dir, 'src-'));
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(src, rel), text);
  const put = await c.t.api('PUT', new URL(created.body.upload.url).pathname, {
    token: c.u.token,
    raw: execFileSync('tar', ['-C', src, '-czf', '-', '.']),
    headers: { 'content-type': 'application/gzip' },
  });
  expect(put.status, put.text).toBe(200);
  return created.body.data.id as string;
}

async function buildFinished(c: Ctx, id: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const r = await c.t.api('GET', `/v1/builds/${id}`, { token: c.u.token });
    if (['succeeded', 'failed', 'canceled', 'skipped'].includes(r.body.data.status))
      return r.body.data.status;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`build ${id} did not finish`);
}

/** A second person in the team (invited and accepted), for the member rows. */
async function member(c: Ctx, role = 'member') {
  const m = await createUser(c.t);
  const inv = await c.t.api('POST', `/v1/teams/${c.u.teamId}/invitations`, {
    token: c.u.token,
    body: { email: m.email, role },
  });
  expect(inv.status, inv.text).toBe(201);
  return { m, invitationId: inv.body.data.id as string };
}

const accept = async (c: Ctx, token: string, invitationId: string) => {
  const r = await c.t.api('POST', `/v1/account/invitations/${invitationId}/accept`, { token });
  expect(r.status, r.text).toBe(200);
};

const user = (c: Ctx) => ({ type: 'user', id: c.u.userId });

const TABLE: Record<string, Row> = {
  // ── space ──
  'space.created': {
    trigger: async (c) => {
      const s = await newSpace(c);
      return {
        tenantId: c.u.teamId,
        spaceId: s.id,
        actor: user(c),
        details: { slug: s.slug, anonymous: false },
      };
    },
  },
  'space.claimed': {
    trigger: async (c) => {
      const { space, key } = await c.t.server.services.anonymous.createSpace('198.51.100.20', {
        title: 'Anon',
      });
      const r = await c.t.api('POST', '/v1/claim', { token: c.u.token, body: { key, team: c.u.teamId } });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: space.id, actor: user(c), details: { teamId: c.u.teamId } };
    },
  },
  'space.expired': {
    trigger: async (c) => {
      const { space } = await c.t.server.services.anonymous.createSpace('198.51.100.21', { title: 'Gone' });
      await c.t.server.services.anonymous.expireDue(new Date(Date.now() + 7 * HOUR));
      // An unclaimed space is its own tenant.
      return { tenantId: space.id, spaceId: space.id, actor: { type: 'system', id: null } };
    },
  },
  'space.deleted': {
    trigger: async (c) => {
      const s = await newSpace(c);
      expect((await c.t.api('DELETE', `/v1/spaces/${s.id}`, { token: c.u.token })).status).toBe(202);
      return { tenantId: c.u.teamId, spaceId: s.id, actor: user(c), details: { slug: s.slug } };
    },
  },
  'space.config_updated': {
    trigger: async (c) => {
      const s = await newSpace(c);
      const r = await c.t.api('PATCH', `/v1/spaces/${s.id}`, {
        token: c.u.token,
        body: { title: 'Renamed' },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: s.id, actor: user(c), details: { fields: ['title'] } };
    },
  },
  'space.slug_updated': {
    trigger: async (c) => {
      const s = await newSpace(c);
      const slug = `renamed-${uniq()}`;
      const r = await c.t.api('POST', `/v1/spaces/${s.id}/rename`, { token: c.u.token, body: { slug } });
      expect(r.status, r.text).toBeLessThan(300);
      return { tenantId: c.u.teamId, spaceId: s.id, actor: user(c), details: { from: s.slug, to: slug } };
    },
  },
  'space.transferred': { notYet: 'space transfers are not in the product' },
  'space.disabled': {
    notYet: 'disabling a space (takedown, billing) is not in the product; anonymous expiry is space.expired',
  },
  'space.enabled': { notYet: 'no disable, so no enable' },
  'space.access_logout_all': {
    trigger: async (c) => {
      const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/sharing/logout-all`, { token: c.u.token });
      expect(r.status, r.text).toBe(200);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { epoch: r.body.data.epoch },
      };
    },
  },
  'space.access_transfer_scrub': { notYet: 'space transfers are not in the product' },
  'space.share_link_created': {
    trigger: async (c) => {
      const link = await newShareLink(c);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { linkId: link.id } };
    },
  },
  'space.share_link_revoked': {
    trigger: async (c) => {
      const link = await newShareLink(c);
      const r = await c.t.api('DELETE', `/v1/spaces/${c.space.id}/share-links/${link.id}`, {
        token: c.u.token,
      });
      expect(r.status, r.text).toBe(204);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { linkId: link.id } };
    },
  },
  'space.access_request_created': {
    trigger: async (c) => {
      const email = `asker-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.test`;
      const r = await confirmedRequest(c, email);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: { type: 'anonymous', id: email },
        details: { requestId: r.id, email },
      };
    },
  },
  'space.access_request_resolved': {
    trigger: async (c) => {
      const email = `denied-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.test`;
      const req = await confirmedRequest(c, email);
      const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/requests/${req.id}/deny`, {
        token: c.u.token,
      });
      expect(r.status, r.text).toBe(200);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { requestId: req.id, decision: 'denied' },
      };
    },
  },
  'space.grant_created': {
    trigger: async (c) => {
      const g = await newGrant(c);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { grantId: g.id, role: 'viewer' },
      };
    },
  },
  'space.grant_updated': {
    trigger: async (c) => {
      const g = await newGrant(c);
      const r = await c.t.api('PUT', `/v1/spaces/${c.space.id}/grants/${g.id}`, {
        token: c.u.token,
        body: { audience: { type: 'public' }, paths: ['/b/**'], role: 'commenter' },
      });
      expect(r.status, r.text).toBe(200);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { grantId: g.id, role: 'commenter' },
      };
    },
  },
  'space.grant_revoked': {
    trigger: async (c) => {
      const g = await newGrant(c);
      const r = await c.t.api('DELETE', `/v1/spaces/${c.space.id}/grants/${g.id}`, { token: c.u.token });
      expect(r.status, r.text).toBe(204);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { grantId: g.id } };
    },
  },
  // ── site ──
  'site.provision_requested': { notYet: 'site provisioning (runtime placement) is not in the product' },
  'site.placement_hold_set': { notYet: 'placement holds are not in the product' },
  'site.placement_hold_cleared': { notYet: 'placement holds are not in the product' },
  'site.burst_toggled': { notYet: 'burst capacity is not in the product' },
  // ── version ──
  'version.created': {
    trigger: async (c) => {
      const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/versions`, {
        token: c.u.token,
        body: { files: manifestOf({ 'index.html': `created ${uniq()}` }) },
      });
      expect(r.status, r.text).toBe(201);
      const versionId = r.body.data.version.id;
      // Deleted again, so the version.expired row finds its own version only.
      const del = await c.t.api('DELETE', `/v1/spaces/${c.space.id}/versions/${versionId}`, {
        token: c.u.token,
      });
      expect(del.status, del.text).toBe(200);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { versionId, fileCount: 1 },
      };
    },
  },
  'version.ready': {
    trigger: async (c) => {
      const r = await publishViaVersions(
        c.t,
        c.space.id,
        { 'index.html': `ready ${uniq()}` },
        { token: c.u.token },
      );
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { versionId: r.finalized.version.id },
      };
    },
  },
  'version.failed': {
    trigger: async (c) => {
      const site = {
        'index.html': `failed ${uniq()}`,
        'spaces.json': JSON.stringify({
          headers: [{ source: '/*', headers: [{ key: 'X-B', value: 'a\nb' }] }],
        }),
      };
      const created = await c.t.api('POST', `/v1/spaces/${c.space.id}/versions`, {
        token: c.u.token,
        body: { files: manifestOf(site) },
      });
      const versionId = created.body.data.version.id;
      const up = await c.t.api('PUT', `/v1/spaces/${c.space.id}/versions/${versionId}/uploads`, {
        token: c.u.token,
        raw: tarOf(site),
        headers: { 'content-type': 'application/x-tar' },
      });
      expect(up.status, up.text).toBeLessThan(300);
      const fin = await c.t.api('POST', `/v1/spaces/${c.space.id}/versions/${versionId}/finalize`, {
        token: c.u.token,
      });
      expect(fin.body.code, fin.text).toBe('version_failed');
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { versionId } };
    },
  },
  'version.expired': {
    trigger: async (c) => {
      const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/versions`, {
        token: c.u.token,
        body: { files: manifestOf({ 'index.html': `expires ${uniq()}` }) },
      });
      await c.t.server.services.publishing.versions.expireStale(new Date(Date.now() + 25 * HOUR));
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: { type: 'system', id: null },
        details: { versionId: r.body.data.version.id },
      };
    },
  },
  'version.deleted': {
    trigger: async (c) => {
      const s = await newSpace(c);
      const first = await publishViaVersions(c.t, s.id, { 'index.html': 'one' }, { token: c.u.token });
      await publishViaVersions(c.t, s.id, { 'index.html': 'two' }, { token: c.u.token });
      const versionId = first.finalized.version.id;
      const r = await c.t.api('DELETE', `/v1/spaces/${s.id}/versions/${versionId}`, { token: c.u.token });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: s.id, actor: user(c), details: { versionId } };
    },
  },
  'version.warning': {
    notYet: 'finalize reports warnings in the version’s diagnostics; no separate event yet',
  },
  'version.canceled': { notYet: 'an upload can’t be canceled through the API (it expires: version.expired)' },
  // ── channel ──
  'channel.promoted': {
    trigger: async (c) => {
      const r = await c.t.api('POST', `/v1/spaces/${c.space.id}/versions/${c.v1}/promote`, {
        token: c.u.token,
        body: { channel: 'live' },
      });
      expect(r.status, r.text).toBe(200);
      // Back to an older version: a rollback, and the details say so.
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { channel: 'live', versionId: c.v1, reason: 'rollback', rollback: true },
      };
    },
  },
  // ── build ──
  'build.created': {
    trigger: async (c) => {
      const id = await uploadBuild(c, c.space.id, {});
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { buildId: id, sourceType: 'upload' },
      };
    },
  },
  'build.canceled': {
    trigger: async (c) => {
      const id = await uploadBuild(c, c.space.id, {});
      const r = await c.t.api('POST', `/v1/builds/${id}/cancel`, { token: c.u.token });
      expect(r.body.data.status, r.text).toBe('canceled');
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { buildId: id } };
    },
  },
  'build.succeeded': {
    trigger: async (c) => {
      const s = await newSpace(c);
      const id = await uploadBuild(c, s.id, { 'index.html': 'built' });
      expect(await buildFinished(c, id)).toBe('succeeded');
      return {
        tenantId: c.u.teamId,
        spaceId: s.id,
        actor: { type: 'system', id: null },
        details: { buildId: id },
      };
    },
  },
  'build.failed': {
    trigger: async (c) => {
      const s = await newSpace(c);
      const id = await uploadBuild(c, s.id, {
        'spaces.json': JSON.stringify({ build: { buildCommand: 'exit 3' } }),
        'index.html': 'x',
      });
      expect(await buildFinished(c, id)).toBe('failed');
      return {
        tenantId: c.u.teamId,
        spaceId: s.id,
        actor: { type: 'system', id: null },
        details: { buildId: id, errorCode: 'build_command_failed' },
      };
    },
  },
  'build.skipped': { notYet: 'no build is skipped today (no ignore-build rule exists)' },
  // ── domain ──
  'domain.created': {
    trigger: async (c) => {
      const d = await newDomain(c);
      return {
        tenantId: c.u.teamId,
        spaceId: null,
        actor: user(c),
        details: { domainId: d.id, hostname: d.hostname },
      };
    },
  },
  'domain.attached': {
    trigger: async (c) => {
      const d = await newDomain(c);
      const r = await c.t.api('PATCH', `/v1/domains/${d.id}`, {
        token: c.u.token,
        body: { spaceId: c.space.id },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { domainId: d.id } };
    },
  },
  'domain.detached': {
    trigger: async (c) => {
      const d = await newDomain(c, { spaceId: c.space.id });
      const r = await c.t.api('PATCH', `/v1/domains/${d.id}`, { token: c.u.token, body: { spaceId: null } });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { domainId: d.id } };
    },
  },
  'domain.deleted': {
    trigger: async (c) => {
      const d = await newDomain(c);
      expect((await c.t.api('DELETE', `/v1/domains/${d.id}`, { token: c.u.token })).status).toBe(204);
      return { tenantId: c.u.teamId, spaceId: null, actor: user(c), details: { domainId: d.id } };
    },
  },
  'domain.verified': {
    trigger: async (c) => {
      const d = await verifiedDomain(c);
      return {
        tenantId: c.u.teamId,
        actor: { type: 'system', id: null },
        details: { domainId: d.id, status: 'verified' },
      };
    },
  },
  'domain.control_lost': {
    trigger: async (c) => {
      const d = await verifiedDomain(c);
      c.dns.clear(`_spaces-challenge.${d.hostname}`);
      const r = await c.t.api('POST', `/v1/domains/${d.id}/verify`, { token: c.u.token });
      expect(r.body.data.status, r.text).toBe('control_lost');
      return { tenantId: c.u.teamId, actor: { type: 'system', id: null }, details: { domainId: d.id } };
    },
  },
  'domain.verification_failed': {
    trigger: async (c) => {
      const d = await newDomain(c);
      let status = 'pending';
      for (let i = 0; i < 40 && status === 'pending'; i++) {
        status = (await c.t.api('POST', `/v1/domains/${d.id}/verify`, { token: c.u.token })).body.data.status;
      }
      expect(status).toBe('verification_failed');
      return { tenantId: c.u.teamId, actor: { type: 'system', id: null }, details: { domainId: d.id } };
    },
  },
  'domain.dns_updated': { notYet: 'managed DNS zones are not in the product' },
  'domain.nameservers_updated': { notYet: 'managed DNS zones are not in the product' },
  'domain.activated': { notYet: 'domain activation (beyond verified) is not in the product' },
  'domain.blocked': { notYet: 'domain blocking is not in the product' },
  // ── transfer ──
  'transfer.requested': { notYet: 'space transfers are not in the product' },
  'transfer.confirmed': { notYet: 'space transfers are not in the product' },
  'transfer.completed': { notYet: 'space transfers are not in the product' },
  'transfer.canceled': { notYet: 'space transfers are not in the product' },
  'transfer.expired': { notYet: 'space transfers are not in the product' },
  'transfer.failed': { notYet: 'space transfers are not in the product' },
  // ── variable ──
  'variable.updated': {
    trigger: async (c) => {
      const r = await c.t.api('PUT', `/v1/spaces/${c.space.id}/variables/CAT_${seq++}`, {
        token: c.u.token,
        body: { value: 'hunter2', secret: true },
      });
      expect(r.status, r.text).toBe(201);
      return {
        tenantId: c.u.teamId,
        spaceId: c.space.id,
        actor: user(c),
        details: { secret: true, created: true },
      };
    },
  },
  'variable.deleted': {
    trigger: async (c) => {
      const name = `GONE_${seq++}`;
      await c.t.api('PUT', `/v1/spaces/${c.space.id}/variables/${name}`, {
        token: c.u.token,
        body: { value: 'v' },
      });
      const r = await c.t.api('DELETE', `/v1/spaces/${c.space.id}/variables/${name}`, { token: c.u.token });
      expect(r.status).toBe(204);
      return { tenantId: c.u.teamId, spaceId: c.space.id, actor: user(c), details: { name } };
    },
  },
  // ── api_key ──
  'api_key.created': {
    trigger: async (c) => {
      const r = await c.t.api('POST', '/v1/account/api-keys', {
        token: c.u.token,
        body: { name: 'cat', team: c.u.teamId, preset: 'ci_deploy' },
      });
      expect(r.status, r.text).toBe(201);
      return {
        tenantId: c.u.teamId,
        actor: user(c),
        details: { apiKeyId: r.body.data.id, preset: 'ci_deploy' },
      };
    },
  },
  'api_key.revoked': {
    trigger: async (c) => {
      const k = await c.t.api('POST', '/v1/account/api-keys', {
        token: c.u.token,
        body: { name: 'gone', team: c.u.teamId, preset: 'ci_deploy' },
      });
      const r = await c.t.api('DELETE', `/v1/account/api-keys/${k.body.data.id}`, { token: c.u.token });
      expect(r.status, r.text).toBeLessThan(300);
      return { tenantId: c.u.teamId, actor: user(c), details: { apiKeyId: k.body.data.id } };
    },
  },
  'api_key.updated': { notYet: 'API keys can’t be changed after creation (no PATCH)' },
  // ── agent_handoff, webhook ──
  'agent_handoff.created': { notYet: 'agent handoffs are not in the product' },
  'agent_handoff.redeemed': { notYet: 'agent handoffs are not in the product' },
  'agent_handoff.revoked': { notYet: 'agent handoffs are not in the product' },
  'webhook.created': {
    trigger: async (c) => {
      const hook = await newWebhook(c);
      return { tenantId: c.u.teamId, spaceId: null, actor: user(c), details: { webhookId: hook.id } };
    },
  },
  'webhook.updated': {
    trigger: async (c) => {
      const hook = await newWebhook(c);
      const r = await c.t.api('PATCH', `/v1/webhooks/${hook.id}`, {
        token: c.u.token,
        body: { description: 'changed' },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, actor: user(c), details: { webhookId: hook.id } };
    },
  },
  'webhook.secret_rotated': {
    trigger: async (c) => {
      const hook = await newWebhook(c);
      const r = await c.t.api('POST', `/v1/webhooks/${hook.id}/rotate-secret`, {
        token: c.u.token,
        body: {},
      });
      expect(r.status, r.text).toBeLessThan(300);
      return { tenantId: c.u.teamId, actor: user(c), details: { webhookId: hook.id } };
    },
  },
  'webhook.disabled': {
    trigger: async (c) => {
      const hook = await newWebhook(c);
      const r = await c.t.api('PATCH', `/v1/webhooks/${hook.id}`, {
        token: c.u.token,
        body: { status: 'disabled' },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, actor: user(c), details: { webhookId: hook.id, reason: 'manual' } };
    },
  },
  'webhook.deleted': {
    trigger: async (c) => {
      const hook = await newWebhook(c);
      const r = await c.t.api('DELETE', `/v1/webhooks/${hook.id}`, { token: c.u.token });
      expect(r.status, r.text).toBeLessThan(300);
      return { tenantId: c.u.teamId, actor: user(c), details: { webhookId: hook.id } };
    },
  },
  // ── team ──
  'team.updated': {
    trigger: async (c) => {
      const r = await c.t.api('PATCH', `/v1/teams/${c.u.teamId}`, {
        token: c.u.token,
        body: { name: `N ${uniq()}` },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, spaceId: null, actor: user(c), details: { fields: ['name'] } };
    },
  },
  'team.slug_updated': {
    trigger: async (c) => {
      const slug = `team-${uniq()}`;
      const r = await c.t.api('PATCH', `/v1/teams/${c.u.teamId}`, { token: c.u.token, body: { slug } });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, actor: user(c), details: { to: slug } };
    },
  },
  'team.access_defaults_updated': {
    trigger: async (c) => {
      const cur = (await c.t.api('GET', `/v1/teams/${c.u.teamId}`, { token: c.u.token })).body.data
        .defaultAccess;
      const next = cur === 'public' ? 'private' : 'public';
      const r = await c.t.api('PATCH', `/v1/teams/${c.u.teamId}`, {
        token: c.u.token,
        body: { defaultAccess: next },
      });
      expect(r.status, r.text).toBe(200);
      return { tenantId: c.u.teamId, actor: user(c), details: { defaultAccess: next } };
    },
  },
  'team.member_added': {
    trigger: async (c) => {
      const { m, invitationId } = await member(c);
      await accept(c, m.token, invitationId);
      return {
        tenantId: c.u.teamId,
        actor: { type: 'user', id: m.userId },
        details: { userId: m.userId, role: 'member' },
      };
    },
  },
  'team.member_role_updated': {
    trigger: async (c) => {
      const { m, invitationId } = await member(c);
      await accept(c, m.token, invitationId);
      const r = await c.t.api('PATCH', `/v1/teams/${c.u.teamId}/members/${m.userId}`, {
        token: c.u.token,
        body: { role: 'admin' },
      });
      expect(r.status, r.text).toBe(200);
      return {
        tenantId: c.u.teamId,
        actor: user(c),
        details: { userId: m.userId, from: 'member', to: 'admin' },
      };
    },
  },
  'team.member_removed': {
    trigger: async (c) => {
      const { m, invitationId } = await member(c);
      await accept(c, m.token, invitationId);
      const r = await c.t.api('DELETE', `/v1/teams/${c.u.teamId}/members/${m.userId}`, { token: c.u.token });
      expect(r.status, r.text).toBeLessThan(300);
      return { tenantId: c.u.teamId, actor: user(c), details: { userId: m.userId, left: false } };
    },
  },
  'team.builds_deploys_quota_exceeded': { notYet: 'plans and quotas are not in the product' },
  // ── tenant, comment, abuse, claim, feedback ──
  'tenant.past_due': { notYet: 'billing is not in the product' },
  'tenant.suspended': { notYet: 'billing is not in the product' },
  'tenant.reactivated': { notYet: 'billing is not in the product' },
  'tenant.deleted': { notYet: 'deleting a tenant is not in the product' },
  'comment.token_minted': { notYet: 'comments are not in the product' },
  'comment.created': { notYet: 'comments are not in the product' },
  'comment.reply_created': { notYet: 'comments are not in the product' },
  'comment.archived': { notYet: 'comments are not in the product' },
  'comment.unarchived': { notYet: 'comments are not in the product' },
  'abuse_report.created': { notYet: 'abuse reports are not in the product' },
  'abuse_report.updated': { notYet: 'abuse reports are not in the product' },
  'claim.blocked_takedown': { notYet: 'takedowns are not in the product' },
  'claim.authority_rotated': {
    notYet:
      'rotating a space key (POST /v1/claim/rotate) is not mapped to this code; its meaning is not specified',
  },
  'feedback.lead_claim_pending': { notYet: 'feedback leads are not in the product' },
  // ── user ──
  'user.created': {
    trigger: async (c) => {
      const email = `cat-${uniq()}@example.test`;
      const r = await c.t.api('POST', '/v1/users', {
        body: { email, name: 'Cat', password: 'correct horse battery' },
      });
      expect(r.status, r.text).toBe(201);
      const team = await c.t.server.services.store.repos.teams.oldestOwnedBy(r.body.data.id);
      return {
        tenantId: team!.id,
        actor: { type: 'system', id: null },
        details: { userId: r.body.data.id, email },
      };
    },
  },
  'user.signed_in': {
    trigger: async (c) => {
      const r = await c.t.api('POST', '/v1/account/sessions', {
        token: null,
        body: { email: c.u.email, password: 'correct horse battery' },
      });
      expect(r.status, r.text).toBe(201);
      return { tenantId: c.u.teamId, actor: user(c), details: { userId: c.u.userId } };
    },
  },
  'user.deleted': { notYet: 'accounts can’t be deleted through the API' },
  'user.two_factor_enabled': { notYet: 'two-factor sign-in is not in the product' },
  'user.two_factor_disabled': { notYet: 'two-factor sign-in is not in the product' },
  'user.impersonation_started': { notYet: 'impersonation is not in the product' },
  'user.impersonation_stopped': { notYet: 'impersonation is not in the product' },
};

/** An ustar archive of the given files (what the uploads endpoint takes). */
function tarOf(files: Record<string, string>): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cat-tar-'));
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, rel), text);
  const out = execFileSync('tar', ['--format=ustar', '-C', dir, '-cf', '-', ...Object.keys(files)]);
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

it('the table covers the whole catalogue, and every code the product emits is triggered', () => {
  expect(Object.keys(TABLE).sort()).toEqual([...CATALOGUE_CODES].sort());
  const triggered = Object.entries(TABLE)
    .filter(([, r]) => 'trigger' in r)
    .map(([code]) => code)
    .sort();
  expect(triggered).toEqual([...EMITTED_CODES].sort());
});

describeEachDb('event catalogue: each code the product emits, once, with the right fields', (db) => {
  const c = {} as Ctx;
  beforeAll(async () => {
    c.dns = await startDns();
    c.t = await startServer({
      db,
      env: {
        SPACES_DNS_SERVERS: c.dns.address,
        SPACES_BASE_DOMAIN: 'spaces.example.test',
        SPACES_JOB_POLL_MS: '50',
        SPACES_ANON_SPACES_PER_IP: '10',
        SPACES_WEBHOOK_ALLOW: 'http,127.0.0.1',
      },
    });
    c.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-'));
    c.u = await createUser(c.t);
    const s = await newSpace(c);
    const got = await c.t.api('GET', `/v1/spaces/${s.id}`, { token: c.u.token });
    c.space = { ...s, publicName: new URL(got.body.data.space.liveUrl).hostname.split('.')[0]! };
    c.v1 = (
      await publishViaVersions(c.t, s.id, { 'index.html': 'v1' }, { token: c.u.token })
    ).finalized.version.id;
    await publishViaVersions(c.t, s.id, { 'index.html': 'v2' }, { token: c.u.token });
  });
  afterAll(async () => {
    await c.t?.close();
    await c.dns?.close();
    if (c.dir) fs.rmSync(c.dir, { recursive: true, force: true });
  });

  for (const [code, row] of Object.entries(TABLE)) {
    if (!('trigger' in row)) continue;
    it(code, async () => {
      const events = c.t.server.services.store.repos.events;
      const mark = new Date().toISOString();
      const e = await row.trigger(c);
      const rows = await events.list({ tenantIds: [e.tenantId], codes: [code], since: mark }, null, 10);
      expect(rows, `${code}: ${JSON.stringify(rows)}`).toHaveLength(1);
      const ev = c.t.server.services.activity.present(rows[0]!);
      expect(ev.id).toMatch(/^evt_/);
      expect(ev.sequence).toBeGreaterThan(0);
      expect(ev.message.length).toBeGreaterThan(0);
      expect(Date.parse(ev.createdAt)).not.toBeNaN();
      if (e.spaceId !== undefined) expect(ev.spaceId).toBe(e.spaceId);
      if (e.actor) expect(ev.actor).toMatchObject(e.actor);
      if (e.details) expect(ev.details).toMatchObject(e.details);
    }, 60_000);
  }
});
