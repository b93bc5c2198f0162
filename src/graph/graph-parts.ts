/**
 * The parts of one graph, built once per store view: the repository, the
 * run store and tags over the view's store, the caches and hints shared by
 * every view, and the ports (see ports.ts) the orchestrators are given.
 */
import { CountingStore } from '../store/counting-store.js';
import type { InlineBound } from '../table/compaction-policy.js';
import type { ObjectStore } from '../store/object-store.js';
import { treeOptions } from './manifest-codec.js';
import { Repository } from './repository.js';
import { RunStore } from './run-store.js';
import { SearchSegments } from './search-segments.js';
import { LOCAL_EMBEDDER } from './embed-ops.js';
import { Tags } from './tags.js';
import { Remotes } from './remotes.js';
import { BranchHints } from './branch-hints.js';
import { SnapshotReader } from './snapshot-reader.js';
import { Publisher } from './publisher.js';
import { PublicationLanes } from './publication-lanes.js';
import { Branches } from './branches.js';
import { GroupCommit } from './group-commit.js';
import type { Embedder, Generations, GraphPorts } from './ports.js';
import { monotonicIds } from '../model/new-id.js';

export interface GraphOptions {
  actor?: string;
  runCacheBytes?: number;
  /** What fills `@embed` vectors as writes land: the local embedder unless told otherwise (embed-ops.ts). */
  embedder?: Embedder;
  /** Bytes of search segments kept in memory (graph/search-segments.ts). */
  searchCacheBytes?: number;
  /**
   * Wall-clock milliseconds, for the times written into ids (run and commit
   * ULIDs) and the publication deadline. Tests and the simulation move it by hand.
   */
  clock?: () => number;
  /** Floats in [0, 1) for jitter (the publisher's backoff after a lost race); a simulation seeds it. Math.random by default. */
  random?: () => number;
  /**
   * Leaf size of the manifest part trees this graph writes (tables and
   * ancestry; see manifest-codec.ts). Smaller makes deeper trees; tests use
   * it to put small graphs in multi-part manifests. Any size reads back.
   */
  partBytes?: number;
  /**
   * Longest run list a manifest keeps wholly inline (run-list-parts.ts);
   * tests set it low to put run-list parts in small graphs. Any value reads back.
   */
  inlineRuns?: number;
  /**
   * When a write folds a table's piled-up newest runs itself (table/compaction-policy.ts
   * `inlineCompactionStart`); `false` leaves all compaction to the background compactor and to
   * explicit compactions. Tests use it to build long uncompacted run lists, or a lower bound.
   */
  inlineCompaction?: InlineBound | false;
  /** How old a copy of the hook registry deliveries may use (hooks.ts), default 5 s. */
  hookRefreshMs?: number;
}

/** What every store view of one graph shares: the caches and the hints in flight. */
export interface SharedParts {
  repo: Repository;
  runs: RunStore;
  hints: BranchHints;
  lanes: PublicationLanes;
  /**
   * Commit ids, increasing within a millisecond of the graph's clock: commits of one generation
   * are listed newest first by time and then id, so two made in one millisecond keep the order
   * they were made in.
   */
  commitIds: (time: number) => string;
  search: SearchSegments;
}

export interface GraphParts extends SharedParts {
  store: ObjectStore;
  tags: Tags;
  remotes: Remotes;
  heads: SnapshotReader;
  branches: Branches;
  groups: GroupCommit;
  ports: GraphPorts;
}

/** The parts of a graph over `store`; with `shared`, another view of the same graph (same caches). */
export function graphParts(store: ObjectStore, opts: GraphOptions, shared?: SharedParts): GraphParts {
  const clock = opts.clock ?? Date.now;
  const actor = opts.actor ?? 'branchgraph';
  const trees = treeOptions({ tables: opts.partBytes, ancestry: opts.partBytes, runs: opts.inlineRuns });
  const repo = shared?.repo.withStore(store) ?? new Repository(store, { trees, clock });
  const runs =
    shared?.runs.withStore(store, store instanceof CountingStore ? store : undefined) ??
    new RunStore(store, { cacheBytes: opts.runCacheBytes, clock, inlineCompaction: opts.inlineCompaction });
  const tags = new Tags(store, repo.events);
  const remotes = new Remotes(store, clock);
  const hints = shared?.hints ?? new BranchHints();
  const lanes = shared?.lanes ?? new PublicationLanes();
  const commitIds = shared?.commitIds ?? monotonicIds();
  const search = shared?.search ?? new SearchSegments(opts.searchCacheBytes);
  const heads = new SnapshotReader({ repo, runs, store, tags, remotes, clock, search });
  const publication = new Publisher({
    repo,
    runs,
    store,
    heads,
    hints,
    clock,
    random: opts.random ?? Math.random,
    actor,
    lanes,
    commitIds,
  });
  let branches: Branches | undefined;
  const ports: GraphPorts = {
    branches: { delete: (name, o) => (branches as Branches).delete(name, o) },
    heads,
    tables: heads,
    manifests: heads,
    runFiles: runs,
    publication,
    generations: generationsIn(store),
    embedder: opts.embedder ?? LOCAL_EMBEDDER,
    clock,
    actor,
    counted: () => {
      const counting = new CountingStore(store);
      return { ports: graphParts(counting, opts, { repo, runs, hints, lanes, commitIds, search }).ports, counting };
    },
  };
  branches = new Branches({ repo, heads, publication, hints, clock, actor });
  return { store, repo, runs, tags, remotes, hints, lanes, commitIds, search, heads, branches, groups: new GroupCommit(ports), ports };
}

function generationsIn(store: ObjectStore): Generations {
  return {
    create: (key, bytes, signal) => store.putIfAbsent(key, bytes, { signal }),
    list: (prefix, signal) => store.list(prefix, { signal }),
    discard: (keys, signal) => store.deleteMany(keys, { signal }).catch(() => undefined),
  };
}
