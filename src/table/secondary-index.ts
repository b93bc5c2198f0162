/**
 * Secondary indexes: derived tables that answer "which rows hold this
 * @unique value" and "which edges end at this node" without reading the
 * table.
 *
 * An index is itself a table version (runs of keys, no properties), so it
 * has everything runs have: immutable, shared between branches and commits,
 * diffable by run keys, compacted by the same policy. Its keys put the
 * looked-up value first, so a lookup is a prefix scan:
 *     unique:<prop>   canonicalJson(value) NUL entityKey
 *     in              JSON.stringify(toNodeKey) NUL edgeKey
 * Neither encoded value holds a raw NUL (JSON escapes it), so the prefix
 * `value NUL` names exactly one value. A live index row means "this entity
 * holds this value"; a tombstone shadows an older run's row, as in tables.
 *
 * An entry's indexes describe its first `covers` runs exactly: `of` is a
 * fingerprint of those run keys, so an entry whose runs changed under its
 * indexes (anything built by hand from another entry) reads as unindexed,
 * and is indexed again before publication (graph/index-maintenance.ts),
 * never used. The few newest runs above `covers` (a tail of small writes)
 * are read from their rows at lookup, so a small write needs no index write
 * of its own; the tail is folded into the indexes once it grows.
 *
 * Reads (`IndexReader`) take a table as a reader sees it: a published entry
 * with its indexes, plus newer runs on top (pending WAL rows, a batch's
 * staged rows). Keys those runs hold are answered from their rows; every
 * other key's state is the published one, which the index describes
 * exactly. Without a usable index the answer comes from one scan of the
 * table, as before indexes existed.
 *
 * Everything here is pure: runs arrive through `LoadRun`.
 */
import { canonicalJson, contentHash } from '../model/canonical.js';
import { EDGE_TO, type TableType } from '../model/schema.js';
import type { Row, Value } from '../model/values.js';
import { compareKey, runEndsBefore, type RunData, type RunRef, type RunRow } from './run.js';
import { firstIndex, mergeRuns } from './merge-walk.js';
import { newestRows, visitHolders } from './table-lookup.js';
import type { LoadRun, TableVersion } from './table-version.js';

export type IndexSpec = { name: string; kind: 'unique'; prop: string } | { name: 'in'; kind: 'in' };

/** What an entry records of its indexes: how many of its first runs they describe, those runs' fingerprint, and each index's version. */
export interface TableIndexes {
  of: string;
  /** The leading table runs described; absent means all of them. */
  covers?: number;
  sets: Record<string, TableVersion>;
}

/** A table version as published: its runs and, once built, its indexes. */
export interface IndexedVersion extends TableVersion {
  indexes?: TableIndexes;
}

/** The indexes a table type keeps: one per @unique property, and incoming edges for an edge table. */
export function indexSpecs(type: TableType): IndexSpec[] {
  const out = type.props.filter((p) => p.unique).map((p) => uniqueSpec(p.name));
  if (type.kind === 'edge') out.push(IN_SPEC);
  return out;
}

/** The index of a @unique property. */
export function uniqueSpec(prop: string): IndexSpec {
  return { name: `unique:${prop}`, kind: 'unique', prop };
}

/** The incoming-edge index of an edge table. */
export const IN_SPEC: IndexSpec = { name: 'in', kind: 'in' };

/** The run shape of an index: keys only. Its name places its runs beside its table's. */
export function indexType(table: TableType, spec: IndexSpec): TableType {
  return { kind: 'node', name: `${table.name}.index-${spec.name.replace(':', '-')}`, props: [], key: ['k'] };
}

/** A fingerprint of a table's run keys: what an entry's indexes were built for. */
export function runsFingerprint(runs: readonly RunRef[]): string {
  return contentHash(runs.map((r) => r.key).join('\n'));
}

/** The indexes of `v` and how many of its leading runs they describe, when they were built for exactly those. */
export function validIndexes(v: IndexedVersion | undefined): (TableIndexes & { covers: number }) | undefined {
  const ix = v?.indexes;
  if (v === undefined || ix === undefined) return undefined;
  // A published entry never changes, and every read of its table asks: the hash is taken once per entry.
  const known = VALID.get(v);
  if (known !== undefined) return known === null ? undefined : known;
  const covers = ix.covers ?? v.runs.length;
  const valid = covers <= v.runs.length && ix.of === runsFingerprint(v.runs.slice(0, covers)) ? { ...ix, covers } : undefined;
  VALID.set(v, valid ?? null);
  return valid;
}

const VALID = new WeakMap<IndexedVersion, (TableIndexes & { covers: number }) | null>();

/** The encoded value a spec looks up for a row, or undefined when the row holds none. */
function encodedValue(spec: IndexSpec, row: Row | null): string | undefined {
  if (row === null) return undefined;
  if (spec.kind === 'in') return encodeNodeKey(String(row[EDGE_TO]));
  const v = row[spec.prop];
  return v === null || v === undefined ? undefined : encodeUnique(v);
}

/** How a @unique value is looked up. */
export function encodeUnique(v: Value): string {
  return canonicalJson(v);
}

/** How a node key is looked up in an `in` index. */
export function encodeNodeKey(key: string): string {
  return JSON.stringify(key);
}

const entryKey = (enc: string, key: string): string => `${enc}\u0000${key}`;
const LIVE = { tomb: false, hash: '1', props: {} } as const;
const TOMB = { tomb: true, hash: '', props: null } as const;

/** The index rows that take one entity from `before` to `after` (nothing when its value stays). */
export function indexChange(c: { spec: IndexSpec; key: string; before: Row | null; after: Row | null }): RunRow[] {
  const { spec, key, before, after } = c;
  const was = encodedValue(spec, before);
  const now = encodedValue(spec, after);
  if (was === now) return [];
  const out: RunRow[] = [];
  if (was !== undefined) out.push({ key: entryKey(was, key), ...TOMB });
  if (now !== undefined) out.push({ key: entryKey(now, key), ...LIVE });
  return out;
}

/**
 * The `in` index row of one edge, from its key alone (an edge's `to` is part of its key, so the
 * old row is never needed): live while the edge is, a tombstone once it is gone.
 */
export function inChange(edgeKey: string, live: boolean): RunRow {
  const to = String((JSON.parse(edgeKey) as unknown[])[1]);
  return { key: entryKey(encodeNodeKey(to), edgeKey), ...(live ? LIVE : TOMB) };
}

/** The index rows of every live row, sorted: an index built from scratch. */
export async function buildIndexRows(spec: IndexSpec, rows: AsyncIterable<RunRow>): Promise<RunRow[]> {
  const keys: string[] = [];
  for await (const r of rows) addEntryKey(spec, r, keys);
  return entriesOf(keys);
}

/** The same, of rows in hand. */
export function indexRowsOf(spec: IndexSpec, rows: readonly RunRow[]): RunRow[] {
  const keys: string[] = [];
  for (const r of rows) addEntryKey(spec, r, keys);
  return entriesOf(keys);
}

function addEntryKey(spec: IndexSpec, r: RunRow, keys: string[]): void {
  const entry = indexEntry(spec, r);
  if (entry !== undefined) keys.push(entry);
}

/** The index key a live row gives under `spec` (none for a tombstone or a row without the value). */
export function indexEntry(spec: IndexSpec, r: RunRow): string | undefined {
  const enc = encodedValue(spec, r.tomb ? null : r.props);
  return enc === undefined ? undefined : entryKey(enc, r.key);
}

/** An index key's two halves: the encoded value looked up, and the key of the entity holding it. */
export function entryParts(entry: string): { value: string; key: string } {
  const at = entry.indexOf('\u0000');
  return { value: entry.slice(0, at), key: entry.slice(at + 1) };
}

/** Live entries in key order: strings sort by UTF-16 code units without a comparator, the order compareKey gives. */
function entriesOf(keys: string[]): RunRow[] {
  return keys.sort().map((key) => ({ key, ...LIVE }));
}

/** Entity keys holding each encoded value, according to the index version `v` alone. */
export async function indexHolders(v: TableVersion, encs: readonly string[], load: LoadRun): Promise<Map<string, string[]>> {
  const wanted = [...new Set(encs)].sort(compareKey);
  const newest = new Map<string, boolean>();
  const rows = v.runs.reduce((n, r) => n + r.rows, 0);
  // Many values: one pass over the index beats a lookup per value.
  if (wanted.length * 64 > rows) {
    const set = new Set(wanted);
    for await (const r of mergeRuns({ runs: v.runs, load })) if (set.has(r.key.slice(0, r.key.indexOf('\u0000')))) newest.set(r.key, true);
  } else {
    const prefixes = wanted.map((e) => `${e}\u0000`);
    for (let i = v.runs.length - 1; i >= 0; i--) {
      const run = v.runs[i] as RunRef;
      if (!mayHoldAnyPrefix(run, prefixes)) continue;
      // Probes come in order, so each searches a part's keys from where the one before it ended.
      let last: RunData | undefined;
      let from = 0;
      await visitHolders({
        parts: run.segmented ? await load.segments(run) : [run],
        probes: prefixes,
        load,
        mayHold: mayHoldPrefix,
        visit: (p, data) => {
          let j = data.lowerBound(p, data === last ? from : 0);
          for (; j < data.length && (data.keys[j] as string).startsWith(p); j++) {
            const k = data.keys[j] as string;
            if (!newest.has(k)) newest.set(k, data.tombs[j] !== true);
          }
          last = data;
          from = j;
          return undefined;
        },
      });
    }
  }
  const out = new Map<string, string[]>();
  for (const [k, live] of newest) {
    if (!live) continue;
    const cut = k.indexOf('\u0000');
    const enc = k.slice(0, cut);
    const list = out.get(enc) ?? [];
    list.push(k.slice(cut + 1));
    out.set(enc, list);
  }
  return out;
}

/**
 * Whether `prefixes.some((p) => mayHoldPrefix(ref, p))`, in two binary searches rather than a
 * test per prefix (a 100-row write probed each of its values against each index run). `prefixes`
 * are sorted and none starts another, as `value NUL` prefixes are: then those from the run's least
 * key up to its end may all be held, and below the least key only the greatest prefix can start it.
 */
export function mayHoldAnyPrefix(ref: RunRef, prefixes: readonly string[]): boolean {
  if (ref.rows === 0) return false;
  const end = firstIndex(prefixes.length, (i) => runEndsBefore(ref, prefixes[i] as string, true));
  const least = firstIndex(end, (i) => compareKey(prefixes[i] as string, ref.minKey) >= 0);
  return least < end || (least > 0 && mayHoldPrefix(ref, prefixes[least - 1] as string));
}

/** Could a run or segment hold a key starting with `prefix`? */
export function mayHoldPrefix(ref: RunRef, prefix: string): boolean {
  if (ref.rows === 0 || runEndsBefore(ref, prefix, true)) return false;
  return compareKey(ref.minKey.slice(0, prefix.length), prefix) <= 0;
}

/** A table as a reader sees it, with the published entry (and its indexes) it is built on. */
export interface IndexedTable {
  type: TableType;
  version: TableVersion;
  load: LoadRun;
  /** The published entry the version extends; its indexes describe its runs. */
  published?: IndexedVersion;
  /** Loads an index's runs. */
  indexLoad: (spec: IndexSpec) => LoadRun;
}

/**
 * Index lookups over one table as a reader sees it. Exact: the answer is
 * what a scan of `version` would give, whether or not an index is usable.
 */
export class IndexReader {
  private extras: Promise<Map<string, RunRow>> | undefined;
  private described: ReturnType<typeof validIndexes> | null = null;

  constructor(private readonly t: IndexedTable) {}

  /** The usable index for `spec`: published, and describing leading runs of what is read. */
  private usable(spec: IndexSpec): { set: TableVersion; covers: number } | undefined {
    const { published, version } = this.t;
    // Checked once per reader: the fingerprint hashes the run keys.
    if (this.described === null) this.described = validIndexes(published);
    const ix = this.described;
    const set = ix?.sets[spec.name];
    if (ix === undefined || set === undefined || published === undefined) return undefined;
    const prefix = published.runs.slice(0, ix.covers).every((r, i) => version.runs[i]?.key === r.key);
    return prefix ? { set, covers: ix.covers } : undefined;
  }

  /** Newest rows of the runs above those the index describes: keys whose state it does not know. */
  private newer(covers: number): Promise<Map<string, RunRow>> {
    this.extras ??= (async () =>
      new Map((await newestRows(this.t.version.runs.slice(covers), this.t.load)).map((r) => [r.key, r] as const)))();
    return this.extras;
  }

  /** Live entity keys holding each encoded value (see `encodeUnique`, `encodeNodeKey`). */
  async holders(spec: IndexSpec, encs: Iterable<string>): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (this.t.version.runs.length === 0) return out;
    const wanted = [...new Set(encs)];
    if (wanted.length === 0) return out;
    const add = (enc: string, key: string): void => {
      const list = out.get(enc) ?? [];
      list.push(key);
      out.set(enc, list);
    };
    const set = new Set(wanted);
    const ix = this.usable(spec);
    if (ix === undefined) {
      for await (const r of mergeRuns({ runs: this.t.version.runs, load: this.t.load })) {
        const enc = encodedValue(spec, r.props);
        if (enc !== undefined && set.has(enc)) add(enc, r.key);
      }
      return out;
    }
    const [indexed, newer] = await Promise.all([indexHolders(ix.set, wanted, this.t.indexLoad(spec)), this.newer(ix.covers)]);
    for (const [enc, ks] of indexed) for (const k of ks) if (!newer.has(k)) add(enc, k);
    for (const [k, r] of newer) {
      const enc = encodedValue(spec, r.tomb ? null : r.props);
      if (enc !== undefined && set.has(enc)) add(enc, k);
    }
    for (const ks of out.values()) ks.sort(compareKey);
    return out;
  }
}
