#!/usr/bin/env node
// bench/analytics: how fast a space's 30-day analytics answer with 10 M logged requests behind them.
//
//   node bench/analytics.mjs [--requests 10000000] [--requests-per-visitor 10] [--raw-lines 0]
//                            [--paths 5000] [--runs 30] [--pg [url]] [--keep]
//
// Generates the rows the access log's flushes would have written for `--requests` requests spread over
// the last 30 days (720 hours, a day/night curve) for one space, through the same repositories the
// flush uses (`accessRollups.addHourly/addVisitors/addTop`, and `accessLog.insertMany` for
// `--raw-lines` raw lines): per hour the request, byte and status-class counters; per day the
// distinct visitor hashes (requests / `--requests-per-visitor`) and the request count of every path,
// referrer and country hit that day (paths, referrers and countries drawn from Zipf distributions).
// The hourly sweep's compaction (each finished day keeps its TOP_KEEP keys per kind) runs after the load.
// At ~4 requests a second on average a flush holds a handful of records, so its top-50-per-flush
// bound never drops a key: the per-day sums written here are what the flushes add up to.
// Raw lines are not read by analytics (it reads rollups only); `--raw-lines` adds some to make the
// database the size a real one would be around them.
//
// Then it runs `AnalyticsService.analytics(space, window)` — the code behind
// `GET /v1/spaces/{id}/analytics` — `--runs` times per window and prints the median, p95 and max of
// the 30d query (goal: ≤ 50 ms), and the time of each of its reads. SQLite (a temp file) by default;
// `--pg` uses PostgreSQL (SPACES_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test) in a
// fresh schema, ANALYZEd after the load as autovacuum would, dropped at the end.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { register } from 'tsx/esm/api';

register();
const { openDatabase, migrate } = await import('../src/store/db.ts');
const { Store } = await import('../src/store/repos/index.ts');
const { AnalyticsService, TOP_KEEP, TOP_N } = await import('../src/domain/analytics/service.ts');
const { newId } = await import('../src/ids.ts');

// ---------------------------------------------------------------------------------------------
// Options

function options(argv) {
  const o = {
    requests: 10_000_000,
    requestsPerVisitor: 10,
    rawLines: 0,
    paths: 5_000,
    referrers: 400,
    countries: 60,
    runs: 30,
    pg: null,
    keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const num = () => {
      const n = Number(next().replace(/_/g, ''));
      if (!Number.isFinite(n) || n < 0) throw new Error(`${a} takes a number`);
      return n;
    };
    if (a === '--requests') o.requests = num();
    else if (a === '--requests-per-visitor') o.requestsPerVisitor = Math.max(1, num());
    else if (a === '--raw-lines') o.rawLines = num();
    else if (a === '--paths') o.paths = Math.max(1, num());
    else if (a === '--runs') o.runs = Math.max(1, num());
    else if (a === '--keep') o.keep = true;
    else if (a === '--pg')
      o.pg =
        argv[i + 1] && !argv[i + 1].startsWith('--')
          ? next()
          : process.env.SPACES_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Random draws (seeded: every run writes the same rows)

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A sampler of 0..n-1 with P(i) ∝ 1/(i+1)^s (binary search over the cumulative weights). */
function zipf(n, s, rand) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / (i + 1) ** s;
    cdf[i] = sum;
  }
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const HOUR = 3600_000;
const HOURS = 720;

function fmtMs(n) {
  return `${n.toFixed(n < 10 ? 2 : 1)} ms`;
}
function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const o = options(process.argv.slice(2));
  const began = performance.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spaces-bench-analytics-'));
  const schema = o.pg ? `bench_${randomBytes(5).toString('hex')}` : undefined;
  const url = o.pg ?? `sqlite:${path.join(dir, 'spaces.db')}`;
  const database = await openDatabase(url, { schema, poolSize: 4 });
  const cleanup = async () => {
    await database.close().catch(() => {});
    if (schema && !o.keep) {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: o.pg });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    }
    if (!o.keep) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await migrate(database);
    const store = new Store(database);
    const spaceId = newId('spc');
    const rand = mulberry32(24);
    const pathOf = zipf(o.paths, 1, rand);
    const referrerOf = zipf(o.referrers, 1.1, rand);
    const countryOf = zipf(o.countries, 1.3, rand);
    const paths = Array.from({ length: o.paths }, (_, i) =>
      i === 0 ? '/' : `/docs/section-${i % 40}/page-${i}`,
    );
    const referrers = Array.from({ length: o.referrers }, (_, i) => `https://ref-${i}.example/some/page`);
    const countries = Array.from({ length: o.countries }, (_, i) => `C${String(i).padStart(2, '0')}`);

    // Requests per hour over the last 720 hours, ending with the current one: a day/night curve.
    const nowHour = Math.floor(Date.now() / HOUR) * HOUR;
    const weights = Array.from({ length: HOURS }, (_, h) => {
      const hourOfDay = new Date(nowHour - (HOURS - 1 - h) * HOUR).getUTCHours();
      return 1 + 0.7 * Math.sin(((hourOfDay - 8) / 24) * 2 * Math.PI);
    });
    const wsum = weights.reduce((a, b) => a + b, 0);
    const perHour = weights.map((w) => Math.floor((o.requests * w) / wsum));
    perHour[HOURS - 1] += o.requests - perHour.reduce((a, b) => a + b, 0);

    console.log(
      `bench:analytics: ${o.requests.toLocaleString('en-US')} requests over 30 days for one space on ${o.pg ? 'PostgreSQL' : 'SQLite'}; ` +
        `${o.paths} paths, ${o.referrers} referrers, ${o.countries} countries, a visitor per ${o.requestsPerVisitor} requests, ${o.rawLines.toLocaleString('en-US')} raw lines`,
    );
    const genStart = performance.now();
    const rows = { hourly: 0, visitors: 0, top: 0, raw: 0 };
    let day = null;
    let dayHours = [];
    let dayRequests = 0;
    let top = { path: new Map(), referrer: new Map(), country: new Map() };
    const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
    const flushDay = async () => {
      if (!day) return;
      const visitors = Math.max(1, Math.round(dayRequests / o.requestsPerVisitor));
      const topRows = [];
      for (const [kind, m] of Object.entries(top))
        for (const [key, requests] of m) topRows.push({ spaceId, day, kind, key, requests });
      await store.transaction(async (repos) => {
        await repos.accessRollups.addHourly(dayHours);
        for (let i = 0; i < visitors; i += 20_000) {
          const batch = [];
          for (let j = i; j < Math.min(visitors, i + 20_000); j++)
            batch.push({ spaceId, day, visitor: randomBytes(16).toString('base64url').slice(0, 22) });
          await repos.accessRollups.addVisitors(batch);
        }
        await repos.accessRollups.addTop(topRows);
      });
      rows.hourly += dayHours.length;
      rows.visitors += visitors;
      rows.top += topRows.length;
      process.stdout.write(
        `  ${day}: ${dayRequests.toLocaleString('en-US').padStart(10)} requests, ${visitors.toLocaleString('en-US')} visitors, ${topRows.length} top keys  (${((performance.now() - genStart) / 1000).toFixed(1)} s)\n`,
      );
      dayHours = [];
      dayRequests = 0;
      top = { path: new Map(), referrer: new Map(), country: new Map() };
    };
    for (let h = 0; h < HOURS; h++) {
      const iso = new Date(nowHour - (HOURS - 1 - h) * HOUR).toISOString();
      if (iso.slice(0, 10) !== day) {
        await flushDay();
        day = iso.slice(0, 10);
      }
      const r = perHour[h];
      const s5 = Math.round(r * 0.005);
      const s4 = Math.round(r * 0.045);
      const s3 = Math.round(r * 0.05);
      dayHours.push({
        spaceId,
        hour: iso.slice(0, 13),
        requests: r,
        bytes: r * 18_000,
        s2xx: r - s3 - s4 - s5,
        s3xx: s3,
        s4xx: s4,
        s5xx: s5,
      });
      dayRequests += r;
      for (let i = 0; i < r; i++) {
        bump(top.path, paths[pathOf()]);
        if (rand() < 0.3) bump(top.referrer, referrers[referrerOf()]);
        bump(top.country, countries[countryOf()]);
      }
    }
    await flushDay();

    // Raw lines, spread over the 30 days (not read by analytics; they make the database its real size).
    for (let done = 0; done < o.rawLines; ) {
      const n = Math.min(20_000, o.rawLines - done);
      const lines = [];
      for (let i = 0; i < n; i++) {
        const t = nowHour - Math.floor(rand() * HOURS * HOUR);
        lines.push({
          id: newId('acc', t),
          spaceId,
          versionId: null,
          at: new Date(t).toISOString(),
          host: 'bench.localhost',
          method: 'GET',
          path: paths[pathOf()],
          status: 200,
          bytes: 18_000,
          durationMs: 1,
          referrer: null,
          userAgent: 'Mozilla/5.0 (bench)',
          country: countries[countryOf()],
          requestId: null,
          visitor: randomBytes(16).toString('base64url').slice(0, 22),
        });
      }
      await store.transaction((repos) => repos.accessLog.insertMany(lines));
      done += n;
      rows.raw = done;
      if (done % 200_000 === 0 || done === o.rawLines)
        process.stdout.write(`  raw lines: ${done.toLocaleString('en-US')}\n`);
    }
    // The hourly sweep trims each finished day's top keys to TOP_KEEP per kind (today's stay whole).
    const today = new Date(nowHour).toISOString().slice(0, 10);
    const trimmed = await store.repos.accessRollups.compactTop('0000-00-00', today, TOP_KEEP);
    rows.top -= trimmed;
    const genSeconds = (performance.now() - genStart) / 1000;
    if (o.pg) {
      const { sql } = await import('kysely');
      await sql`analyze`.execute(database.db);
    }

    // The query: the service behind GET /v1/spaces/{id}/analytics, and each of its reads alone.
    // Asked at the hour the rows were generated for (a long load may cross into the next hour).
    const clock = { now: () => new Date(nowHour + 30 * 60_000) };
    const service = new AnalyticsService(store, clock);
    const results = {};
    let check = null;
    for (const window of ['30d', '7d', '48h']) {
      const times = [];
      for (let i = 0; i < o.runs + 1; i++) {
        const t0 = performance.now();
        const a = await service.analytics(spaceId, window);
        times.push(performance.now() - t0);
        if (window === '30d') check = a;
      }
      const first = times.shift();
      times.sort((a, b) => a - b);
      results[window] = {
        first,
        median: quantile(times, 0.5),
        p95: quantile(times, 0.95),
        max: times.at(-1),
      };
    }
    const fromMs = nowHour - (HOURS - 1) * HOUR;
    const fromHour = new Date(fromMs).toISOString().slice(0, 13);
    const fromDay = fromHour.slice(0, 10);
    const r = store.repos.accessRollups;
    const parts = {};
    for (const [name, run] of [
      ['hourly', () => r.hourly(spaceId, fromHour)],
      ['visitors', () => r.visitors(spaceId, fromDay)],
      ['top paths', () => r.top(spaceId, 'path', fromDay, TOP_N)],
      ['top referrers', () => r.top(spaceId, 'referrer', fromDay, TOP_N)],
      ['top countries', () => r.top(spaceId, 'country', fromDay, TOP_N)],
    ]) {
      const times = [];
      for (let i = 0; i < Math.min(o.runs, 10); i++) {
        const t0 = performance.now();
        await run();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      parts[name] = quantile(times, 0.5);
    }

    if (check.requests !== o.requests)
      throw new Error(`30d answered ${check.requests} requests, expected ${o.requests}`);
    console.log('');
    console.log(
      `rows: ${rows.hourly} hourly, ${rows.visitors.toLocaleString('en-US')} visitor hashes (+ a count a day), ${rows.top.toLocaleString('en-US')} top (after the sweep kept ${TOP_KEEP} per finished day and kind, ${trimmed.toLocaleString('en-US')} trimmed), ${rows.raw.toLocaleString('en-US')} raw lines in ${genSeconds.toFixed(1)} s`,
    );
    console.log(
      `30d answer: ${check.requests.toLocaleString('en-US')} requests, ${check.visitors.toLocaleString('en-US')} visitors, top path ${check.topPaths[0]?.key} (${check.topPaths[0]?.requests})`,
    );
    for (const [w, x] of Object.entries(results)) {
      console.log(
        `  ${w.padEnd(3)} analytics: median ${fmtMs(x.median)}, p95 ${fmtMs(x.p95)}, max ${fmtMs(x.max)}, first ${fmtMs(x.first)} (${o.runs} runs)`,
      );
    }
    console.log(
      `  30d reads alone (median): ${Object.entries(parts)
        .map(([k, v]) => `${k} ${fmtMs(v)}`)
        .join(', ')}`,
    );
    const goal = results['30d'].median <= 50;
    console.log(
      `\n30d analytics for ${o.requests.toLocaleString('en-US')} requests: median ${fmtMs(results['30d'].median)} (goal ≤ 50 ms: ${goal ? 'ok' : 'MISS'}) on ${o.pg ? 'PostgreSQL' : 'SQLite'}; total ${((performance.now() - began) / 1000).toFixed(0)} s`,
    );
    if (o.keep) console.log(`kept: ${o.pg ? `schema ${schema}` : dir}`);
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:analytics failed: ${err?.stack ?? err}`);
    process.exit(1);
  },
);
