/**
 * Resolves refs to snapshots: a manifest (with its schema and, for a
 * branch head, the pending WAL generations on top), a branch head found
 * through its record and head hint, a commit through the commit index, a
 * tag through the commit it names. Also the table view of a snapshot that
 * reads and plans use (`TableReader`).
 */
import { BranchgraphError } from '../model/errors.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import type { ObjectStore } from '../store/object-store.js';
import { EMPTY_TABLE } from '../table/table-version.js';
import { IndexReader, indexType } from '../table/secondary-index.js';
import { NO_PENDING, readPending, watermarksFor } from '../pending/pending-wal.js';
import { GenerationFoldedError } from '../pending/generation.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { BranchRecord } from './branch-record.js';
import type { BranchHint } from './branch-records.js';
import type { Repository } from './repository.js';
import type { RunStore } from './run-store.js';
import type { Tags } from './tags.js';
import type { Remotes } from './remotes.js';
import type { HeadOptions, Heads, HintedHead, ManifestReader, SchemaReader, TableReader, TableView } from './ports.js';
import { shownTables, type PendingMode, type Ref, type Snapshot } from './snapshot.js';
import { RefResolver } from './ref-resolver.js';
import type { SearchSegments } from './search-segments.js';

/** What a reader reads from: the repository, the runs, the store (WAL listings), the tags and the clock. */
export interface SnapshotSources {
  repo: Repository;
  runs: RunStore;
  store: ObjectStore;
  tags: Tags;
  remotes: Remotes;
  clock: () => number;
  /** Search segments, shared by every view of the graph. */
  search: SearchSegments;
}

export class SnapshotReader implements Heads, TableReader, ManifestReader, SchemaReader {
  private readonly refs: RefResolver;

  constructor(private readonly from: SnapshotSources) {
    this.refs = new RefResolver({ repo: from.repo, store: from.store, tags: from.tags, remotes: from.remotes, reads: this });
  }

  async snapshotAt(ref: ManifestRef, opts: { signal?: AbortSignal; branch?: BranchRecord; pending?: PendingMode } = {}): Promise<Snapshot> {
    const { repo, runs, store } = this.from;
    const { signal, branch, pending = 'none' } = opts;
    const readAt = this.from.clock();
    const manifest = await repo.manifests.read(ref, signal);
    const [schema, pendingWal] = await Promise.all([
      repo.schemas.read(manifest.schema, signal),
      pending !== 'none' && branch !== undefined
        ? readPending({ store, runs, manifest, lineage: branch.lineage, signal, listOnly: pending === 'listed' })
        : NO_PENDING,
    ]);
    const tables = shownTables(manifest, schema, pendingWal);
    return { ref, manifest, schema, tables, pending: pendingWal, readAt, ...(branch !== undefined ? { branch } : {}) };
  }

  branchHead(name: string, signal?: AbortSignal, opts: HeadOptions = {}): Promise<Snapshot> {
    return this.headOf(name, { signal, opts });
  }

  /**
   * A branch's head, or, for a branch this process has not seen, the head its hint names, to plan
   * on while `check` reads the head itself (the same round trips a head read takes, now beside the
   * plan instead of before it). Only a hint that carries its manifest, whose branch has no WAL
   * shards and whose schema is known is planned on: the snapshot is then exactly what a head read
   * of that version finds. A caller publishes nothing planned on it unless `check` finds the same head.
   */
  async hintedHead(name: string, signal?: AbortSignal): Promise<HintedHead> {
    const { repo } = this.from;
    if (repo.records.known(name) !== undefined) return { head: await this.headOf(name, { signal }) };
    const hinted = repo.records.primeFromHint(name, signal);
    const check = this.headOf(name, { signal, hint: hinted });
    check.catch(() => undefined);
    const hint = await hinted;
    const manifest = await hint?.manifest?.catch(() => undefined);
    if (
      hint === undefined ||
      manifest === undefined ||
      hint.record.deleted ||
      Object.keys(watermarksFor(manifest, hint.record.lineage)).length > 0 ||
      !repo.schemas.has(manifest.schema)
    )
      return { head: await check };
    const schema = await repo.schemas.read(manifest.schema, signal);
    const tables = shownTables(manifest, schema, NO_PENDING);
    const head = { ref: hint.head, manifest, schema, tables, pending: NO_PENDING, branch: hint.record, readAt: this.from.clock() };
    return { head, check };
  }

  /** A branch's head, found from `hint` (a hint already being read) when the process has not seen the branch. */
  private async headOf(
    name: string,
    o: { signal?: AbortSignal | undefined; opts?: HeadOptions; hint?: Promise<BranchHint | undefined> },
  ): Promise<Snapshot> {
    const { signal, opts = {}, hint } = o;
    const { repo } = this.from;
    for (let attempt = 1; ; attempt++) {
      // A branch this process has not seen: read its head hint beside its records, so the head's
      // manifest is on its way by the time the record says which lineage to list.
      const known = repo.records.known(name);
      const hinted = attempt === 1 && known === undefined ? (hint ?? repo.records.primeFromHint(name, signal)) : undefined;
      // A branch this process knows: its lineage is probed for a newer version while its records are
      // checked for a newer one, so a warm head costs one round trip, not two. The probe counts only
      // if the record it probed is still the newest (a reset or a recreated branch moves lineage).
      const probed = known !== undefined ? repo.versions.headRef(known, signal) : undefined;
      probed?.catch(() => undefined);
      const rec = await repo.records.live(name, signal, hinted);
      // The hint was read beside the records; wait for it even when the record was already known,
      // so the head is found from the version it names, not by listing the lineage, and for the
      // manifest it carries, so that version is not read again.
      await (await hinted)?.manifest?.catch(() => undefined);
      try {
        const pending: PendingMode = opts.withoutPending === true ? 'none' : opts.pendingListedOnly === true ? 'listed' : 'view';
        const same = probed !== undefined && known?.seq === rec.seq && known.lineage === rec.lineage;
        const ref = same ? await probed : await repo.versions.headRef(rec, signal);
        return await this.snapshotAt(ref, { signal, branch: rec, pending });
      } catch (e) {
        // A generation listed as pending was folded and deleted before we read it: the head moved on.
        if (!(e instanceof GenerationFoldedError) || attempt >= 4) throw e;
      }
    }
  }

  async commitSnapshot(commitId: string, signal?: AbortSignal): Promise<Snapshot> {
    const ref = await this.from.repo.commits.ref(commitId, signal);
    const snap = await this.snapshotAt(ref, { signal }).catch((e: unknown) => {
      if (e instanceof BranchgraphError && e.code === 'not_found')
        throw new BranchgraphError('not_found', `commit ${commitId} does not exist`);
      throw e;
    });
    // The index is written before publication; a lost race leaves an entry for someone else's version.
    if (snap.manifest.commit.id !== commitId) throw new BranchgraphError('not_found', `commit ${commitId} does not exist`);
    return snap;
  }

  async resolve(ref: Ref, signal?: AbortSignal): Promise<Snapshot> {
    if ('path' in ref) return this.refs.resolve(ref.path, signal);
    if ('branch' in ref) return this.refs.branchOrPrefix(ref.branch, signal);
    if ('tag' in ref) return this.commitSnapshot((await this.from.tags.get(ref.tag, signal)).commit, signal);
    return this.commitSnapshot(ref.commit, signal);
  }

  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest> {
    return this.from.repo.manifests.read(ref, signal);
  }

  headRef(rec: BranchRecord, signal?: AbortSignal): Promise<ManifestRef> {
    return this.from.repo.versions.headRef(rec, signal);
  }

  latestVersion(lineage: string, signal?: AbortSignal): Promise<number> {
    return this.from.repo.versions.latest(lineage, signal);
  }

  readSchema(hash: string, signal?: AbortSignal): Promise<Schema> {
    return this.from.repo.schemas.read(hash, signal);
  }

  table(snap: Snapshot, name: string, signal?: AbortSignal): TableView {
    const type = findType(snap.schema, name);
    if (type === undefined) throw new BranchgraphError('not_found', `table ${name} does not exist`, { details: { table: name } });
    const version = snap.tables[name] ?? EMPTY_TABLE;
    const load = this.from.runs.loader(type, signal);
    return {
      type,
      version,
      load,
      indexes: this.indexes(snap, type, signal),
      search: () => this.from.search.version({ store: this.from.store, type, version, load, signal }),
    };
  }

  indexes(snap: Snapshot, type: TableType, signal?: AbortSignal): IndexReader {
    const { runs } = this.from;
    const published = snap.manifest.tables[type.name];
    return new IndexReader({
      type,
      version: snap.tables[type.name] ?? EMPTY_TABLE,
      load: runs.loader(type, signal),
      ...(published !== undefined ? { published } : {}),
      indexLoad: (spec) => runs.loader(indexType(type, spec), signal),
    });
  }
}
