/**
 * Head versions: publication and finding a lineage's head.
 *
 * Publication. Version N+1 of a lineage is a manifest written create-only at
 * `manifests/<lineage>/<N+1>`. Exactly one of several racing publishers wins;
 * the others learn `lost` and re-plan against the new head. A crash before
 * the PUT leaves only unreferenced objects (runs, commit index entries) for
 * garbage collection; nothing is half-published, so opening needs no repair.
 * A batch N+1..N+k (publication-lanes.ts) is one create-only write at N+1
 * whose object holds every version of it; each later version is then
 * written at its own key, and until it is, readers find it in the batch.
 *
 * Heads. A lineage's head is found by listing its manifests forward from a
 * hint: the highest version this process has seen, or else the hint object
 * (rewritten every HINT_EVERY versions). The listing is one call whatever the
 * history depth, so head lookup stays O(1) store calls. A process that
 * knows a published version (it saw it, or a branch head hint names it)
 * asks for the next one by name instead (usually absent: the head is what
 * it knew) and lists only when it is there, because on a local directory a
 * listing reads every version's entry. The highest version stored at its
 * own key names its batch, if it was published in one: the head is then at
 * least the batch's last version, and the lookup asks on from there.
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { BEST_EFFORT, type ObjectStore } from '../store/object-store.js';
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
  /** Later versions of landed batches being written at their own keys. */
  private readonly promoting = new Set<Promise<void>>();

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
      if (exists) return this.settled(lineage, await this.forward(lineage, { from: known, moved }, signal), signal);
    }
    let start: number;
    try {
      start = decodeJson(HintZ, await this.store.get(keys.hint(lineage), { signal }), keys.hint(lineage)).version;
    } catch (e) {
      if (!isBranchgraphError(e, 'object_not_found') && !isBranchgraphError(e, 'corrupt_object')) throw e;
      start = 0;
    }
    const listed = Math.max(start, await this.listFrom(lineage, start > 0 ? keys.manifest(lineage, start) : undefined, signal));
    return this.settled(lineage, listed, signal);
  }

  /**
   * The highest version stored from `from` on, whose next one (`moved`) was asked for. A head a few
   * versions on (a hint left one behind by a compaction or catch-up) is found by name too; only a
   * longer way is listed.
   */
  private async forward(lineage: string, a: { from: number; moved: boolean }, signal?: AbortSignal): Promise<number> {
    let latest = a.from;
    let next = a.moved;
    for (let probes = 0; next && probes < MAX_NEXT_PROBES; probes++) {
      latest++;
      next = await this.hasVersion(lineage, latest + 1, signal);
    }
    if (next) latest = Math.max(latest + 1, await this.listFrom(lineage, keys.manifest(lineage, latest + 1), signal));
    return latest;
  }

  /**
   * The head, given `stored`, the highest version found at its own key: past the end of the batch
   * `stored` is in, if any, whose later versions may not be at their keys yet (format 4). Every
   * version of a batch names it, so the version found tells; past the batch, the next versions are
   * asked for by name again.
   */
  private async settled(lineage: string, stored: number, signal?: AbortSignal): Promise<number> {
    let latest = stored;
    for (;;) {
      const last = latest === 0 ? undefined : (await this.manifests.read({ lineage, version: latest }, signal)).batch?.last;
      if (last === undefined || last <= latest) break;
      latest = await this.forward(lineage, { from: last, moved: await this.hasVersion(lineage, last + 1, signal) }, signal);
    }
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
  publish(m: Manifest, signal?: AbortSignal, parent?: Manifest): Promise<'published' | 'lost'> {
    return this.publishBatch([m], signal, parent);
  }

  /**
   * Publish consecutive versions `ms` at once: one create-only write of the first version's key,
   * whose object holds them all (manifest.ts, format 4), so the batch lands whole or not at all.
   * Once it landed, each later version is written at its own key too (best effort: until then, or
   * if that fails, readers find it in the batch). `parent` is the manifest the first builds on.
   */
  async publishBatch(ms: readonly Manifest[], signal?: AbortSignal, parent?: Manifest): Promise<'published' | 'lost'> {
    const first = ms[0] as Manifest;
    const last = ms[ms.length - 1] as Manifest;
    const key = keys.manifest(first.lineage, first.version);
    await Promise.all(ms.map((m, i) => this.manifests.writeParts(m, signal, i === 0 ? parent : ms[i - 1])));
    try {
      await this.store.putIfAbsent(key, ms.length === 1 ? this.manifests.encode(first) : this.manifests.encodeBatch(ms), { signal });
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) {
        this.know(first.lineage, first.version);
        return 'lost';
      }
      throw e;
    }
    for (const m of ms) this.caches.manifests.set(keys.manifest(m.lineage, m.version), m);
    this.know(first.lineage, last.version);
    if (ms.length > 1) this.promote(ms.slice(1));
    if (Math.floor(last.version / HINT_EVERY) > Math.floor((first.version - 1) / HINT_EVERY)) {
      // Best effort: a stale or missing hint only makes the next cold lookup list more keys.
      await this.store.putOverwrite(keys.hint(first.lineage), encodeJson({ version: last.version }), BEST_EFFORT).catch(() => undefined);
    }
    return 'published';
  }

  /** Whether `ref` is published: at its own key, or in a batch whose later versions are not at theirs yet. */
  async holds(ref: ManifestRef, signal?: AbortSignal): Promise<boolean> {
    if ((await this.store.head(keys.manifest(ref.lineage, ref.version), { signal })) !== undefined) return true;
    return this.manifests.read(ref, signal).then(
      () => true,
      (e: unknown) => {
        if (isBranchgraphError(e, 'not_found')) return false;
        throw e;
      },
    );
  }

  /**
   * When `ref` was published, by the store's clock (the time of its object), or undefined when it
   * is not. A version published in a batch was published with the batch's first version, whatever
   * its own object's time, which is later or absent.
   */
  async publishedAt(ref: ManifestRef, signal?: AbortSignal): Promise<number | undefined> {
    const m = await this.manifests.read(ref, signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'not_found')) return undefined;
      throw e;
    });
    if (m === undefined) return undefined;
    const info = await this.store.head(keys.manifest(ref.lineage, m.batch?.first ?? ref.version), { signal });
    return info === undefined ? undefined : (info.lastModified ?? Number.POSITIVE_INFINITY);
  }

  /** Once the later versions of batches already published are at their own keys (or failed to be). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.promoting]);
  }

  /** Write a landed batch's later versions at their own keys, as their own objects (see publishBatch). */
  private promote(ms: readonly Manifest[]): void {
    const written = Promise.all(
      ms.map((m) => this.store.putIfAbsent(keys.manifest(m.lineage, m.version), this.manifests.encode(m)).catch(() => undefined)),
    ).then(() => undefined);
    this.promoting.add(written);
    void written.finally(() => this.promoting.delete(written));
  }

  private know(lineage: string, version: number): void {
    this.caches.knownVersion.set(lineage, Math.max(this.caches.knownVersion.get(lineage) ?? 0, version));
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
      this.know(m.lineage, m.batch?.last ?? m.version);
      return true;
    } catch {
      return false;
    }
  }
}
