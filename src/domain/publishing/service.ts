import type { Logger } from 'pino';
import type { BlobStore } from '../../blobs/port.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Store } from '../../store/repos/index.ts';
import type { Principal } from '../auth/principal.ts';
import type { DomainEvents } from '../events.ts';
import type { SpaceRow } from '../spaces/service.ts';
import { BlobIndex } from './blob-index.ts';
import { BlobSweep } from './blob-sweep.ts';
import { ChannelService } from './channels.ts';
import { Finalizer } from './finalize.ts';
import { checkManifest } from './manifest.ts';
import type { CreateVersionInput, DeclaredFile, ManifestFlavour, PublishResult } from './model.ts';
import type { UploadTokens } from './tokens.ts';
import { UploadService } from './uploads.ts';
import type { VariableService } from './variables.ts';
import { VariantMaker } from './variants.ts';
import { VersionService } from './versions.ts';

export { manifestDigest } from './manifest.ts';
export * from './model.ts';

export interface PublishingDeps {
  store: Store;
  clock: Clock;
  config: Config;
  blobs: BlobStore;
  tokens: UploadTokens;
  variables: VariableService;
  log: Logger;
  /** Told after a channel moved, so the site edge drops what it cached. */
  events?: DomainEvents;
}

/**
 * Publishing, one collaborator per step, sharing the store's repositories:
 * versions (create, address, list, delete, expire) → uploads (signed PUTs, tar batches) →
 * finalize (settings, templates, variants, compile, commit) → channels (the only code that moves a
 * pointer), with the blob index under all of them and the blob sweep as a job. A version's bytes are
 * content-addressed blobs; it becomes `ready` (and, for production, `live`) in one transaction, so a
 * publish lands whole or not at all. The one-call entry (`publishFiles`) is `Publisher` in publish.ts.
 */
export class PublishingService {
  readonly index: BlobIndex;
  readonly versions: VersionService;
  readonly uploads: UploadService;
  readonly variants: VariantMaker;
  readonly channels: ChannelService;
  readonly finalizer: Finalizer;
  readonly blobSweep: BlobSweep;

  constructor(private readonly d: PublishingDeps) {
    this.index = new BlobIndex(d.store, d.blobs, d.clock);
    this.versions = new VersionService(d.store, this.index, d.clock, d.config, d.log, d.events?.log);
    this.uploads = new UploadService(d.store, this.index, this.versions, d.tokens, d.clock, d.config, d.log);
    this.variants = new VariantMaker(d.store, this.index, d.clock);
    this.channels = new ChannelService(d.store, d.clock, this.versions, d.events);
    this.finalizer = new Finalizer(
      d.store,
      this.index,
      this.versions,
      this.uploads,
      this.variants,
      this.channels,
      d.variables,
      d.clock,
      d.config,
    );
    this.blobSweep = new BlobSweep(d.store, d.blobs);
  }

  /** Checks a manifest against path rules and the server's limits; returns canonical entries. */
  checkManifest(files: CreateVersionInput['files'], flavour: ManifestFlavour): DeclaredFile[] {
    return checkManifest(files, flavour, this.d.config.limits);
  }

  /**
   * Step 1 of the versions flow: records the manifest and answers which bytes still need uploading.
   * Identical content to the live version (production target) creates nothing: a no-op receipt.
   */
  async createVersion(
    p: Principal,
    space: SpaceRow,
    input: CreateVersionInput,
    flavour: ManifestFlavour = 'versions',
    checked?: DeclaredFile[],
  ): Promise<PublishResult> {
    const files = checked ?? this.checkManifest(input.files, flavour);
    const made = await this.versions.create(p, space, input, files);
    if (!('own' in made)) return { space, version: made, noop: true, targets: [], outcome: 'unchanged' };
    const targets = await this.uploads.targets(made.version, made.own, made.known);
    return { space, version: made.version, noop: false, targets, outcome: 'pending' };
  }

  /**
   * Step 3: the version becomes `ready` and its channel moves (its target's, or `channel`), or it
   * fails with diagnostics.
   */
  finalize(p: Principal, space: SpaceRow, ref: string, channel?: string): Promise<PublishResult> {
    return this.finalizer.finalize(p, space, ref, channel);
  }
}

/** Background job: expire versions left unfinalized for 24 h. */
export function expireStaleVersions(services: { publishing: PublishingService }, now: Date): Promise<number> {
  return services.publishing.versions.expireStale(now);
}

/** Background job: delete blobs nothing references any more, after a grace period. */
export function sweepUnreferencedBlobs(
  services: { publishing: PublishingService },
  now: Date,
  graceMs: number,
): Promise<{ deleted: number; bytes: number }> {
  return services.publishing.blobSweep.run(now, graceMs);
}
