/**
 * The repository: the graph's stored state over the object store, as five
 * parts with one concept each, sharing one set of caches:
 * - `records`, branch names and their lineages (branch-records.ts);
 * - `versions`, publication and each lineage's head (head-versions.ts);
 * - `manifests`, published manifests and their parts (manifest-store.ts);
 * - `commits`, where each commit is (commit-index.ts);
 * - `schemas`, schemas by content address (schema-store.ts);
 * and `events`, where every change is appended (event-log.ts).
 */
import type { ObjectStore } from '../store/object-store.js';
import { EMPTY_SCHEMA } from '../model/schema.js';
import { emptyTree } from '../model/part-tree.js';
import { newId } from '../model/new-id.js';
import { Ancestry } from './ancestry.js';
import { BranchRecords } from './branch-records.js';
import { CommitIndex } from './commit-index.js';
import { EventLog } from './event-log.js';
import { HeadVersions } from './head-versions.js';
import type { Manifest } from './manifest.js';
import { treeOptions, type TreeOptions } from './manifest-codec.js';
import { ManifestStore } from './manifest-store.js';
import { RepositoryCaches } from './repository-caches.js';
import { SchemaStore } from './schema-store.js';

export class Repository {
  readonly records: BranchRecords;
  readonly versions: HeadVersions;
  readonly manifests: ManifestStore;
  readonly commits: CommitIndex;
  readonly schemas: SchemaStore;
  /** Where every change to the graph is appended (event-log.ts). */
  readonly events: EventLog;
  readonly trees: TreeOptions;
  private readonly clock: () => number;
  private readonly caches: RepositoryCaches;

  constructor(
    readonly store: ObjectStore,
    opts: {
      /** How the trees this repository writes are shaped. */
      trees?: TreeOptions;
      /** Ids of new parts come from this clock: GC reads them as ages. */
      clock?: () => number;
      caches?: RepositoryCaches;
      events?: EventLog;
    } = {},
  ) {
    this.trees = opts.trees ?? treeOptions();
    this.clock = opts.clock ?? Date.now;
    this.events = opts.events ?? new EventLog(store, this.clock);
    this.caches = opts.caches ?? new RepositoryCaches();
    this.schemas = new SchemaStore(store, this.caches.schemas);
    this.commits = new CommitIndex(store);
    this.manifests = new ManifestStore(store, { caches: this.caches, trees: this.trees, clock: this.clock, schemas: this.schemas });
    this.versions = new HeadVersions(store, this.caches, this.manifests);
    this.records = new BranchRecords(store, this.caches.branchRecords, {
      events: this.events,
      versions: this.versions,
      manifests: this.manifests,
      schemas: this.schemas,
    });
  }

  /** The same repository seen through another store (for example a per-request counting wrapper). */
  withStore(store: ObjectStore): Repository {
    return new Repository(store, { trees: this.trees, clock: this.clock, caches: this.caches, events: this.events.withStore(store) });
  }

  /** Drop every in-memory cache, as a restarted process would have none. */
  clearCaches(): void {
    this.events.forget();
    this.caches.manifests.clear();
    this.caches.schemas.clear();
    this.caches.parts.clear();
    this.caches.knownVersion.clear();
    this.caches.branchRecords.clear();
  }

  // ---- bootstrap -------------------------------------------------------

  /** Create `main` with an empty initial commit, unless the graph exists. */
  async init(actor: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const rec = await this.records.newest('main', signal);
      if (rec !== undefined) return;
      const lineage = newId();
      const schema = await this.schemas.write(EMPTY_SCHEMA, signal);
      const commitId = newId();
      const time = new Date().toISOString();
      const m: Manifest = {
        lineage,
        version: 1,
        schema,
        schemaDoc: EMPTY_SCHEMA,
        tables: {},
        tableTree: emptyTree(),
        wal: {},
        commit: { id: commitId, parents: [], parentIds: [], branch: 'main', actor, message: 'initial commit', time, kind: 'init' },
        ancestry: Ancestry.fromTree(emptyTree(), { lineage, version: 1 }, this.trees.ancestry),
        generation: 1,
      };
      await this.commits.write(commitId, { lineage, version: 1 }, signal);
      await this.versions.publish(m, signal);
      const res = await this.records.write({ name: 'main', lineage, deleted: false, from: null, time, actor }, 0, {
        event: 'branch_created',
        signal,
      });
      if (res !== 'lost') return;
      // Another process initialised the graph first; its main wins.
    }
  }
}
