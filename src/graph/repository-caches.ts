/**
 * What a repository keeps in memory: immutable objects (manifests, schemas,
 * parts, run-list parts), bounded by count so a long history cannot grow a
 * process without end, and what this process last saw of heads and branch
 * records. Shared by every view of one graph (another store wrapper).
 */
import { PromiseCache } from '../model/promise-cache.js';
import type { PartNode } from '../model/part-tree.js';
import type { Schema } from '../model/schema.js';
import type { BranchRecord } from './branch-record.js';
import type { Manifest } from './manifest.js';
import { RunListParts, type RunListPart } from './run-list-parts.js';

const MANIFEST_CACHE_ENTRIES = 20_000;
const SCHEMA_CACHE_ENTRIES = 1_000;
const PART_CACHE_ENTRIES = 100_000;
/** Run refs held by cached run-list parts (a ref is a few hundred bytes). */
const RUN_PART_CACHE_REFS = 200_000;

export class RepositoryCaches {
  // Immutable objects, bounded by count: a long history or many lineages must not grow a process without end.
  readonly manifests = new PromiseCache<string, Manifest>({ maxWeight: MANIFEST_CACHE_ENTRIES });
  readonly schemas = new PromiseCache<string, Schema>({ maxWeight: SCHEMA_CACHE_ENTRIES });
  readonly parts = new PromiseCache<string, PartNode<unknown>>({ maxWeight: PART_CACHE_ENTRIES });
  readonly runParts = new PromiseCache<string, RunListPart>({ maxWeight: RUN_PART_CACHE_REFS, weigh: (p) => p.refs.length });
  /** The layout of every run list this graph read or wrote (per graph, as the entries are: see run-list-parts.ts). */
  readonly runLists = new RunListParts();
  /** Per lineage, the highest version this process knows is published. */
  readonly knownVersion = new Map<string, number>();
  /** Per lineage, a version a branch hint named, to be confirmed by the next listing. */
  readonly hintedVersion = new Map<string, number>();
  readonly branchRecords = new Map<string, BranchRecord>();
}
