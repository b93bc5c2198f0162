/**
 * Head versions: publication and finding a lineage's head.
 *
 * Publication. Version N+1 of a lineage is a manifest written create-only at
 * `manifests/<lineage>/<N+1>`. Exactly one of several racing publishers wins;
 * the others learn `lost` and re-plan against the new head. A crash before
 * the PUT leaves only unreferenced objects (runs, commit index entries) for
 * garbage collection; nothing is half-published, so opening needs no repair.
 *
 * Heads. A lineage's head is found by listing its manifests forward from a
 * hint: the highest version this process has seen, or else the hint object
 * (rewritten every HINT_EVERY versions). The listing is one call whatever the
 * history depth, so head lookup stays O(1) store calls. A process that
 * knows a published version (it saw it, or a branch head hint names it)
 * asks for the next one by name instead (usually absent: the head is what
 * it knew) and lists only when it is there, because on a local directory a
 * listing reads every version's entry.
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { keys, versionOfManifestKey } from './keys.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { ManifestStore } from './manifest-store.js';
import type { RepositoryCaches } from './repository-caches.js';

export const HINT_EVERY = 32;
/** How many versions past a known one are asked for by name before the lineage is listed. */
const MAX_NEXT_PROBES = 3;

const HintZ = z.object({ version: z.number().int().min(0) });

export class HeadVersions {
  constructor(
    private readonly store: ObjectStore,
    private readonly caches: RepositoryCaches,
    private readonly manifests: ManifestStore,
  ) {}

  /** Whether this process knows a published version of `lineage`. */
  knows(lineage: string): boolean {
    return this.caches.knownVersion.has(lineage);
  }

  /** A version a branch hint names for `lineage`: the next lookup checks it by name before listing. */
  hinted(lineage: string, version: number): void {
    this.caches.hintedVersion.set(lineage, version);
  }

  /** Highest published version of a lineage (0 when it has none). */
  async latest(lineage: string, signal?: AbortSignal): Promise<number> {
    const hinted = this.caches.knownVersion.has(lineage) ? undefined : this.caches.hintedVersion.get(lineage);
    this.caches.hintedVersion.delete(lineage);
    // A version known to be published (this process saw it, or a branch hint names it and its
    // manifest, prefetched, proves it) is checked by asking for the next one by name: one GET whose
    // cost never grows with the lineage, where a directory listing reads every version's entry.
    // A lineage this process found empty (a branch that has not written since its fork) is asked
    // the same way, for its version 1: versions start at 1 and are published in order.
    const known = this.caches.knownVersion.get(lineage) ?? hinted;
    if (known !== undefined && known >= 0) {
      const [exists, moved] = await Promise.all([
        known === this.caches.knownVersion.get(lineage) || known === 0 ? true : this.hasVersion(lineage, known, signal),
        this.hasVersion(lineage, known + 1, signal),
      ]);
      if (exists) {
        // A head a few versions on (a hint left one behind by a compaction or catch-up) is found by
        // name too; only a longer way is listed.
        let latest = known;
        let next = moved;
        for (let probes = 0; next && probes < MAX_NEXT_PROBES; probes++) {
          latest++;
          next = await this.hasVersion(lineage, latest + 1, signal);
        }
        if (next) latest = Math.max(latest + 1, await this.listFrom(lineage, keys.manifest(lineage, latest + 1), signal));
        this.caches.knownVersion.set(lineage, latest);
        return latest;
      }
    }
    let start: number;
    try {
      start = decodeJson(HintZ, await this.store.get(keys.hint(lineage), { signal }), keys.hint(lineage)).version;
    } catch (e) {
      if (!isBranchgraphError(e, 'object_not_found') && !isBranchgraphError(e, 'corrupt_object')) throw e;
      start = 0;
    }
    const latest = Math.max(start, await this.listFrom(lineage, start > 0 ? keys.manifest(lineage, start) : undefined, signal));
    this.caches.knownVersion.set(lineage, latest);
    return latest;
  }

  /** Whether version `version` of `lineage` is published; a present manifest is read and cached. */
  private hasVersion(lineage: string, version: number, signal?: AbortSignal): Promise<boolean> {
    // Asked on every read of a head and almost always answered no: the store's absence is taken as
    // it comes, with no error of our own made for it.
    return this.manifests.load(keys.manifest(lineage, version), signal).then(
      () => true,
      (e: unknown) => {
        if (isBranchgraphError(e, 'object_not_found')) return false;
        throw e;
      },
    );
  }

  /** The highest version listed after `startAfter` (0 when none). */
  private async listFrom(lineage: string, startAfter: string | undefined, signal?: AbortSignal): Promise<number> {
    let latest = 0;
    for await (const o of this.store.list(keys.manifestPrefix(lineage), { signal, startAfter })) {
      const v = versionOfManifestKey(o.key);
      if (v !== undefined && v > latest) latest = v;
    }
    return latest;
  }

  /** The manifest a branch currently shows: its lineage's latest, or its fork point. */
  async headRef(rec: { name: string; lineage: string; from: ManifestRef | null }, signal?: AbortSignal): Promise<ManifestRef> {
    const v = await this.latest(rec.lineage, signal);
    if (v > 0) return { lineage: rec.lineage, version: v };
    if (rec.from === null) throw new BranchgraphError('corrupt_object', `branch ${rec.name} has no versions and no fork point`);
    return rec.from;
  }

  /**
   * Publish `m` as version `m.version` of `m.lineage`, create-only.
   * Returns `lost` when another publisher took that version first.
   */
  async publish(m: Manifest, signal?: AbortSignal, parent?: Manifest): Promise<'published' | 'lost'> {
    const key = keys.manifest(m.lineage, m.version);
    await this.manifests.writeParts(m, signal, parent);
    try {
      await this.store.putIfAbsent(key, this.manifests.encode(m), { signal });
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) {
        this.caches.knownVersion.set(m.lineage, Math.max(this.caches.knownVersion.get(m.lineage) ?? 0, m.version));
        return 'lost';
      }
      throw e;
    }
    this.caches.manifests.set(key, m);
    this.caches.knownVersion.set(m.lineage, Math.max(this.caches.knownVersion.get(m.lineage) ?? 0, m.version));
    if (m.version % HINT_EVERY === 0) {
      // Best effort: a stale or missing hint only makes the next cold lookup list more keys.
      await this.store.putOverwrite(keys.hint(m.lineage), encodeJson({ version: m.version })).catch(() => undefined);
    }
    return 'published';
  }

  /**
   * Whether `m` itself landed, read from the store (not the cache), for a
   * publish whose response was lost. False when unknown as well as when not.
   */
  async isPublished(m: Manifest, signal?: AbortSignal): Promise<boolean> {
    const key = keys.manifest(m.lineage, m.version);
    try {
      const stored = await this.manifests.decode(await this.store.get(key, { signal }), key, signal);
      // A re-laid version carries its commit's id: its layout id tells two re-layings apart.
      if (stored.commit.id !== m.commit.id || stored.layout?.id !== m.layout?.id) return false;
      this.caches.manifests.set(key, stored);
      this.caches.knownVersion.set(m.lineage, Math.max(this.caches.knownVersion.get(m.lineage) ?? 0, m.version));
      return true;
    } catch {
      return false;
    }
  }
}
