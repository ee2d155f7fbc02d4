import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ApiError, fail } from '../../errors/problem.ts';
import { compileSite } from '../../site/compile.ts';
import { isCompressible } from '../../site/compress.ts';
import type { ManifestEntry } from '../../site/types.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import { actorFromPrincipal, tenantOfSpace } from '../events/log.ts';
import { ownHostMatcher } from '../hosts/names.ts';
import { type PackagedRuntime, packageFunctions, type RuntimeConfig } from '../runtime/package.ts';
import type { SpaceRow } from '../spaces/service.ts';
import type { BlobIndex } from './blob-index.ts';
import { ChannelService } from './channels.ts';
import {
  type ActivationOutcome,
  byPathOrder,
  channelOfTarget,
  contentTypeOf,
  type PublishResult,
  type VersionFileRow,
} from './model.ts';
import { isServable } from './paths.ts';
import { readSiteInputs } from './site-inputs.ts';
import type { UploadService } from './uploads.ts';
import type { VariableService } from './variables.ts';
import type { VariantMaker } from './variants.ts';
import type { VersionService } from './versions.ts';

/**
 * Finalize: the step that turns an uploading version into a served one. It checks the snapshot is
 * whole, reads its settings, renders templates, completes compressed variants, compiles the site's
 * rules, and then in one transaction marks the version `ready` and moves its channel (through the
 * channel module). Blocking diagnostics mark it `failed` instead and move nothing.
 */
export class Finalizer {
  constructor(
    private readonly store: Store,
    private readonly index: BlobIndex,
    private readonly versions: VersionService,
    private readonly uploads: UploadService,
    private readonly variants: VariantMaker,
    private readonly channels: ChannelService,
    private readonly variables: VariableService,
    private readonly clock: Clock,
    private readonly config: Config,
  ) {}

  /**
   * Validates the whole snapshot, compiles its serving inputs, renders templates, precomputes
   * compressed variants, then in ONE transaction marks it `ready` and (production) moves `live`.
   * Blocking diagnostics mark it `failed` and leave `live` alone.
   */
  async finalize(p: Principal, space: SpaceRow, ref: string, channel?: string): Promise<PublishResult> {
    if (channel !== undefined) ChannelService.checkName(channel);
    const v = await this.versions.resolve(space, ref);
    this.uploads.forget(v.id);
    if (v.status === 'expired')
      throw new ApiError('version_expired', 'The version expired before it was finalized.');
    if (v.status !== 'uploading') {
      throw new ApiError(
        'version_not_finalizable',
        `The version is ${v.status}; only an uploading version finalizes.`,
        {
          details: { status: v.status },
        },
      );
    }
    // The version's own rows and what the store holds of them, in one query; a layered version's
    // inherited rows come from its base (ready, so its blobs are stored and its rows final).
    const joined = await this.store.repos.versionFiles.ownWithBlobs(v.id);
    const stored = new Map<string, string | null>();
    const ownRows: VersionFileRow[] = [];
    const removed = new Set<string>();
    /** Own rows' state at create: finalize writes only rows whose state it changes. */
    const before = new Map<VersionFileRow, string>();
    for (const { stored_sha256, stored_variants, ...r } of joined) {
      if (r.removed) {
        removed.add(r.path);
        continue;
      }
      if (stored_sha256 !== null) stored.set(stored_sha256, stored_variants);
      before.set(r, `${r.sha256}|${r.content_type}|${r.encodings}`);
      ownRows.push(r);
    }
    const missing = new Set(ownRows.map((r) => r.source_sha256).filter((d) => !stored.has(d)));
    ownRows.sort(byPathOrder);
    // Every file in path order; `baseOf[i]` is the base row `rows[i]` was copied from (inherited),
    // null for the version's own rows. Copies carry the source bytes (a template's rendering is redone
    // below); an inherited row's variants are final (its base was finalized).
    let rows: VersionFileRow[] = ownRows;
    const baseOf: Array<VersionFileRow | null> = [];
    if (v.base_id) {
      rows = [];
      const base = await this.versions.flatRows(v.base_id);
      let i = 0;
      const take = () => {
        rows.push(ownRows[i++]!);
        baseOf.push(null);
      };
      for (const b of base) {
        while (i < ownRows.length && ownRows[i]!.path < b.path) take();
        if (i < ownRows.length && ownRows[i]!.path === b.path) take();
        else if (!removed.has(b.path)) {
          rows.push({
            ...b,
            version_id: v.id,
            sha256: b.source_sha256,
            size: b.source_size,
            encodings: b.sha256 === b.source_sha256 ? b.encodings : null,
          });
          baseOf.push(b);
        }
      }
      while (i < ownRows.length) take();
    } else for (let i = 0; i < rows.length; i++) baseOf.push(null);
    /** A row by path (binary search over the sorted rows). */
    const rowAt = (pth: string): VersionFileRow | undefined => {
      let lo = 0;
      let hi = rows.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const p = rows[mid]!.path;
        if (p === pth) return rows[mid];
        if (p < pth) lo = mid + 1;
        else hi = mid - 1;
      }
      return undefined;
    };
    if (missing.size) {
      const paths = rows.filter((r) => missing.has(r.source_sha256)).map((r) => r.path);
      fail('version_files_missing', `${paths.length} declared file(s) were not uploaded.`, {
        details: { paths: paths.slice(0, 1000), count: paths.length },
      });
    }
    if (!rows.some((r) => isServable(r.path))) {
      fail('version_no_publishable_files', 'The version has no file a visitor could be served.', {
        details: { paths: rows.slice(0, 20).map((r) => r.path) },
      });
    }
    const { diagnostics, config, vars, rendered, redirectsText, headersText } = await readSiteInputs(
      space,
      rowAt,
      this.index,
      this.variables,
    );

    // Content types and precomputed compressed variants (once per blob, reused by later versions).
    const variantRows = stored;
    for (const [sha256, v] of await this.index.known(rendered.map((r) => r.sha256)))
      variantRows.set(sha256, v);
    /** An inherited row finalize left as it was: its content type and encodings are final. */
    const untouched = (i: number) => baseOf[i] !== null && rows[i]!.sha256 === baseOf[i]!.sha256;
    const todo = new Map<string, { sha256: string; size: number }>();
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (untouched(i)) continue;
      // Content types were set from the path at create.
      r.content_type ??= contentTypeOf(r.path);
      if (variantRows.get(r.sha256) == null && isCompressible(r.content_type, r.size)) {
        todo.set(r.sha256, { sha256: r.sha256, size: r.size });
      }
    }
    for (const [sha256, enc] of await this.variants.compute([...todo.values()])) {
      variantRows.set(sha256, JSON.stringify(enc));
    }
    // Compiling looks at paths only; a row's encodings are the stored variants JSON as is ('{}' =
    // computed, none worth keeping). Rows are in path order already.
    const entries: ManifestEntry[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      const contentType = r.content_type!;
      if (!untouched(i)) {
        const cached = isCompressible(contentType, r.size) ? variantRows.get(r.sha256) : null;
        r.encodings = cached && cached !== '{}' ? cached : null;
      }
      entries.push({ path: r.path, sha256: r.sha256, size: r.size, contentType });
    }

    const plainVars: Record<string, string> = {};
    for (const [k, val] of vars.size ? vars : await this.variables.forTemplates(space.id)) {
      if (!val.secret && val.value !== null) plainVars[k] = val.value;
    }
    const compiled = compileSite({
      files: entries,
      redirectsText,
      headersText,
      config,
      vars: plainVars,
      isOwnHost: ownHostMatcher(this.config.baseDomain, space.public_name),
    });
    diagnostics.push(...compiled.diagnostics);
    // Code this version runs (issue 26): bundled from its own files; the rules learn what it claims.
    let runtime: PackagedRuntime | null = null;
    const runtimeConfig = (config as { runtime?: RuntimeConfig } | null)?.runtime;
    if (runtimeConfig?.kind === 'functions' && compiled.rules) {
      runtime = await packageFunctions(runtimeConfig, rows, rowAt, this.index, diagnostics);
      if (runtime) {
        compiled.rules.worker = runtime.claims;
        await this.index.record([runtime.bundle]);
      }
    }
    const failed = !compiled.ok || diagnostics.some((x) => x.severity === 'error');
    const now = this.clock.now().toISOString();

    if (failed) {
      const finished = await this.store.transaction(async (repos) => {
        const ok = await repos.versions.finish(v.id, {
          status: 'failed',
          diagnostics: JSON.stringify(diagnostics),
          finalizedAt: now,
        });
        if (ok) {
          const errors = diagnostics.filter((x) => x.severity === 'error').map((x) => x.code);
          await this.versions.eventLog?.record(repos, {
            tenantId: tenantOfSpace(space),
            spaceId: space.id,
            actor: actorFromPrincipal(p),
            code: 'version.failed',
            message: `Version ${v.number} of ${space.slug} failed to finalize.`,
            details: { versionId: v.id, number: v.number, errors },
          });
        }
        return ok;
      });
      if (!finished) {
        throw new ApiError('version_not_finalizable', 'The version was finalized by another request.');
      }
      throw new ApiError(
        'version_failed',
        'The version failed to finalize; `details.diagnostics` says why.',
        {
          details: { versionId: v.id, diagnostics },
        },
      );
    }

    let outcome: ActivationOutcome = 'not_activated';
    let flattened = false;
    await this.store.transaction(async (repos) => {
      const finished = await repos.versions.finish(v.id, {
        status: 'ready',
        rules: JSON.stringify(compiled.rules ?? null),
        diagnostics: JSON.stringify(diagnostics),
        config: config ? JSON.stringify(config) : null,
        finalizedAt: now,
      });
      if (!finished) {
        throw new ApiError('version_not_finalizable', 'The version was finalized by another request.');
      }
      // Only rows that changed since create are written: few on an incremental publish, all in bulk
      // (delete + batched insert, far cheaper than one UPDATE each) on a first one. A changed inherited
      // row becomes one of the layer's own; a layer with many changes is stored flat instead.
      const changed: VersionFileRow[] = [];
      const overrides: VersionFileRow[] = [];
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        const b = baseOf[i];
        const state = `${r.sha256}|${r.content_type}|${r.encodings}`;
        if (b === null) {
          if (before.get(r) !== state) changed.push(r);
        } else if (!untouched(i) && state !== `${b.sha256}|${b.content_type}|${b.encodings}`) {
          overrides.push(r);
        }
      }
      if (v.base_id && changed.length + overrides.length > 200) {
        // Too much of the layer changed: store it flat.
        await repos.versionFiles.replace(v.id, rows);
        await repos.versions.clearBase(v.id);
        flattened = true;
      } else {
        await repos.versionFiles.insert(overrides);
        await repos.versionFiles.updateChanged(v.id, rows, changed);
      }
      if (runtime) {
        await repos.versionRuntimes.put({
          version_id: v.id,
          space_id: space.id,
          kind: runtime.kind,
          entry: runtime.entry,
          entry_kind: runtime.entryKind,
          bundle_sha256: runtime.bundle.sha256,
          bundle_size: runtime.bundle.size,
          compatibility_date: runtime.compatibilityDate,
          capabilities: JSON.stringify(runtime.capabilities),
          routes: JSON.stringify(runtime.routes),
          created_at: now,
        });
      }
      // A production version goes live; a preview one moves `preview` (served at `preview--<host>`).
      await this.channels.move(repos, space.id, channel ?? channelOfTarget(v.target), v.id, p, 'publish');
      // After the move: every writer takes the channel row before the tenant's event counter (promote
      // does too), so two of them never wait on each other in opposite order.
      await this.versions.eventLog?.record(repos, {
        tenantId: tenantOfSpace(space),
        spaceId: space.id,
        actor: actorFromPrincipal(p),
        code: 'version.ready',
        message: `Version ${v.number} of ${space.slug} is ready.`,
        details: { versionId: v.id, number: v.number, target: v.target, fileCount: rows.length },
      });
      outcome = 'activated';
    });
    this.channels.moved(space.id);
    // A flat version is the base of the next re-publish: keep its rows at hand.
    if (!v.base_id || flattened) this.versions.rememberFlat(v.id, rows);
    const version = await this.versions.resolve(space, v.id);
    return { space, version, noop: false, targets: [], outcome };
  }
}
