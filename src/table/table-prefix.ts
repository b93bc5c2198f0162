/**
 * Prefix scans of a table version: the live rows whose key starts with a prefix (a node's edges),
 * reading only the runs and segments whose key range meets it.
 *
 * Pure: run bytes arrive through a `LoadRun` function.
 */
import type { RunData, RunRef, RunRow } from './run.js';
import { compareKey, runEndsBefore } from './run.js';
import type { LoadRun, TableVersion } from './table-version.js';
import { firstIndex, mergeSpans, type MergeSpan } from './merge-walk.js';

/** Live rows whose key starts with `prefix`, in key order. */
export async function* scanPrefix(v: TableVersion, load: LoadRun, prefix: string): AsyncGenerator<RunRow> {
  for await (const batch of prefixSpans(v, load, prefix))
    for (const { data, from, to } of batch) for (let i = from; i < to; i++) if (!data.tombs[i]) yield data.rowAt(i);
}

/** Live rows whose key starts with `prefix`, in key order, in one array (a batch reader's form of `scanPrefix`). */
export async function prefixRows(v: TableVersion, load: LoadRun, prefix: string): Promise<RunRow[]> {
  return (await prefixRowsMany({ v, load, prefixes: [prefix] })).get(prefix) ?? [];
}

/**
 * The live rows under each of many prefixes (an edge table's edges of many nodes), in key order
 * per prefix, at most `limit` each. One pass per run over the prefixes in sorted order: each
 * segment is bisected to, loaded once however many prefixes fall in it, and walked from the
 * prefix's first key; the runs' entries are then merged per prefix, the newest run winning. So a
 * batch of nodes costs a load per segment touched and a binary search per node, not a merge per
 * node. With one run the walk stops after `limit` rows (with more, a newer tombstone may
 * hide one of them, so each run gives all its entries).
 */
export async function prefixRowsMany(a: {
  v: TableVersion;
  load: LoadRun;
  prefixes: readonly string[];
  limit?: number | undefined;
}): Promise<Map<string, RunRow[]>> {
  const { v, load, limit = Number.POSITIVE_INFINITY } = a;
  const prefixes = [...new Set(a.prefixes)].sort(compareKey);
  const runs = v.runs.filter((r) => r.rows > 0);
  const perRun: Map<string, RunRow[]>[] = [];
  for (const run of runs) perRun.push(await runPrefixEntries({ run, load, prefixes, limit: runs.length === 1 ? limit : undefined }));
  const out = new Map<string, RunRow[]>();
  for (const prefix of prefixes) {
    const lists = perRun.map((m) => m.get(prefix) ?? []);
    let rows: RunRow[];
    if (lists.length === 1) rows = (lists[0] as RunRow[]).filter((r) => !r.tomb);
    else {
      // Later runs are newer: their entry for a key replaces an older one.
      const byKey = new Map<string, RunRow>();
      for (const list of lists) for (const r of list) byKey.set(r.key, r);
      rows = [...byKey.values()].filter((r) => !r.tomb).sort((x, y) => compareKey(x.key, y.key));
    }
    out.set(prefix, rows.length > limit ? rows.slice(0, limit) : rows);
  }
  return out;
}

/** One run's entries (tombstones too) under each sorted prefix, at most `limit` live ones each. */
async function runPrefixEntries(a: {
  run: RunRef;
  load: LoadRun;
  prefixes: readonly string[];
  limit: number | undefined;
}): Promise<Map<string, RunRow[]>> {
  const { run, load, prefixes, limit = Number.POSITIVE_INFINITY } = a;
  const out = new Map<string, RunRow[]>();
  const holds = (r: RunRef, prefix: string): boolean =>
    !runEndsBefore(r, prefix, true) && compareKey(r.minKey.slice(0, prefix.length), prefix) <= 0;
  const wanted = prefixes.filter((p) => holds(run, p));
  if (wanted.length === 0) return out;
  const parts = run.segmented ? await load.segments(run) : [run];
  const loaded = new Map<number, RunData>();
  const dataAt = async (n: number): Promise<RunData> => {
    let d = loaded.get(n);
    if (d === undefined) {
      d = await load(parts[n] as RunRef);
      loaded.set(n, d);
    }
    return d;
  };
  for (const prefix of wanted) {
    const rows: RunRow[] = [];
    let live = 0;
    // The first segment that reaches the prefix; the prefix's keys may run on into the next ones.
    let n = firstIndex(parts.length, (i) => !runEndsBefore(parts[i] as RunRef, prefix, true));
    walk: for (; n < parts.length && holds(parts[n] as RunRef, prefix); n++) {
      const data = loaded.get(n) ?? (await dataAt(n));
      for (let i = data.lowerBound(prefix); i < data.length; i++) {
        if (!(data.keys[i] as string).startsWith(prefix) || live >= limit) break walk;
        const row = data.rowAt(i);
        if (!row.tomb) live++;
        rows.push(row);
      }
    }
    if (rows.length > 0) out.set(prefix, rows);
  }
  return out;
}

/** The merge's spans cut to the keys that start with `prefix`; the walk stops at the first key past them. */
async function* prefixSpans(v: TableVersion, load: LoadRun, prefix: string): AsyncGenerator<MergeSpan[]> {
  // Every key with the prefix sorts after the prefix minus its last character.
  const runs = v.runs.filter((r) => !runEndsBefore(r, prefix, true) && compareKey(r.minKey.slice(0, prefix.length), prefix) <= 0);
  for await (const batch of mergeSpans({ runs, load, startAfter: prefix.slice(0, -1) })) {
    const cut: MergeSpan[] = [];
    for (const span of batch) {
      const { data, from, to } = span;
      let i = from;
      // Keys before the prefix (between the prefix minus its last character and the prefix) are passed over.
      while (i < to && compareKey(data.keys[i] as string, prefix) < 0) i++;
      let j = i;
      while (j < to && (data.keys[j] as string).startsWith(prefix)) j++;
      if (j > i) cut.push({ data, from: i, to: j });
      if (j < to) {
        if (cut.length > 0) yield cut;
        return;
      }
    }
    if (cut.length > 0) yield cut;
  }
}
