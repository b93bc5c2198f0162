/**
 * Table versions over in-memory runs: deltas by shared runs, the k-way merge
 * (newest wins, tombstones shadow), lookups that skip runs by key range,
 * and the streamed comparison used when sharing is lost. A fast-check
 * property checks every read against a plain map built the slow way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableType } from '../model/schema.js';
import { rowHash, type Row } from '../model/values.js';
import { compareKey, decodeRun, KEY_BOUND_CHARS, runRefOf, type RunData, type RunRef, type RunRow } from './run.js';
import { encodeRun } from './run-encode.js';
import { changedStates, compareVersions } from './table-compare.js';
import { deltaRuns } from './table-delta.js';
import { lookupEntries, lookupStates, newestRows } from './table-lookup.js';
import { READ_AHEAD_RUN_BYTES } from './read-ahead.js';
import { mergeRuns, mergeSpans, type MergeSpan } from './merge-walk.js';
import { prefixRows, prefixRowsMany, scanPrefix } from './table-prefix.js';
import type { LoadRun, TableVersion } from './table-version.js';
import { HeadCursor } from './head-cursor.js';

const T: TableType = {
  kind: 'node',
  name: 'T',
  key: ['id'],
  props: [
    { name: 'id', type: { kind: 'string' }, optional: false, unique: false, range: null },
    { name: 'v', type: { kind: 'int' }, optional: true, unique: false, range: null },
  ],
} as TableType;

/** A store of encoded runs, loaded through the real decoder, counting loads. */
function runs() {
  const files = new Map<string, Uint8Array>();
  let loads = 0;
  let n = 0;
  const load = (async (ref: RunRef) => {
    loads++;
    return decodeRun({ table: T, bytes: files.get(ref.key) as Uint8Array, objectKey: ref.key, expected: ref });
  }) as LoadRun;
  const segments = new Map<string, RunRef[]>();
  load.segments = async (ref) => segments.get(ref.key) ?? [ref];
  const encoded = (rows: RunRow[]): RunRef => {
    const file = encodeRun(T, rows);
    const key = `runs/T/${String(++n).padStart(4, '0')}.arrow`;
    files.set(key, file);
    return runRefOf({ key, rows, file });
  };
  /** A run of `entries`; with `segmentRows`, a segmented run of parts that many rows long. */
  const write = (entries: [string, number | null][], segmentRows?: number): RunRef => {
    const rows: RunRow[] = [...entries]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, v]) =>
        v === null
          ? { key, tomb: true, hash: '', props: null }
          : { key, tomb: false, hash: rowHash({ id: key, v }), props: { id: key, v } as Row },
      );
    const whole = encoded(rows);
    if (segmentRows === undefined || rows.length <= segmentRows) return whole;
    const parts: RunRef[] = [];
    for (let i = 0; i < rows.length; i += segmentRows) parts.push(encoded(rows.slice(i, i + segmentRows)));
    segments.set(whole.key, parts);
    return { ...whole, segmented: true };
  };
  return { load, write, loads: () => loads };
}

/** `load` behind a store round trip, counting the round trips a walk waits (loads that began after the ones before them ended, plus the first). */
function waitedRoundTrips(load: LoadRun): { timed: LoadRun; waits: () => number } {
  let inFlight = 0;
  let waits = 0;
  const timed = Object.assign(async (ref: RunRef) => {
    if (inFlight++ === 0) waits++;
    await new Promise((done) => setTimeout(done, 2));
    inFlight--;
    return load(ref);
  }, load) as LoadRun;
  return { timed, waits: () => waits };
}

/** `load` behind a store round trip, counting the most reads in flight together. */
function roundTrips(load: LoadRun): { slow: LoadRun; most: () => number; reset: () => void } {
  let inFlight = 0;
  let most = 0;
  const slow = (async (ref: RunRef) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((done) => setTimeout(done, 2));
    inFlight--;
    return load(ref);
  }) as LoadRun;
  slow.segments = load.segments;
  return {
    slow,
    most: () => most,
    reset: () => {
      most = 0;
    },
  };
}

describe('runs', () => {
  it('encode and decode round-trip rows, tombstones and nulls exactly', () => {
    const rows: RunRow[] = [
      { key: 'a', tomb: false, hash: rowHash({ id: 'a', v: 1 }), props: { id: 'a', v: 1 } },
      { key: 'b', tomb: true, hash: '', props: null },
      { key: 'c', tomb: false, hash: rowHash({ id: 'c', v: null }), props: { id: 'c', v: null } },
    ];
    const file = encodeRun(T, rows);
    const data = decodeRun({ table: T, bytes: file, objectKey: 'k', expected: runRefOf({ key: 'k', rows, file }) });
    expect(rows.map((_, i) => data.rowAt(i))).toEqual(rows);
  });
});

describe('table versions', () => {
  it('deltaRuns: the runs a version adds to its base, or undefined once sharing is lost', () => {
    const { write } = runs();
    const [a, b, c] = [write([['x', 1]]), write([['y', 1]]), write([['z', 1]])];
    expect(deltaRuns({ runs: [a] }, { runs: [a, b, c] })?.map((r) => r.key)).toEqual([b.key, c.key]);
    expect(deltaRuns({ runs: [a, b] }, { runs: [a, c] })).toBeUndefined();
    expect(deltaRuns({ runs: [] }, { runs: [a] })?.map((r) => r.key)).toEqual([a.key]);
  });

  it('mergeRuns: newest wins per key, tombstones shadow older rows and are hidden unless asked for', async () => {
    const { write, load } = runs();
    const v: TableVersion = {
      runs: [
        write([
          ['a', 1],
          ['b', 1],
          ['c', 1],
        ]),
        write([
          ['b', 2],
          ['c', null],
        ]),
        write([['d', 4]]),
      ],
    };
    const live: string[] = [];
    for await (const r of mergeRuns({ runs: v.runs, load })) live.push(`${r.key}=${String(r.props?.v)}`);
    expect(live).toEqual(['a=1', 'b=2', 'd=4']);
    const all: string[] = [];
    for await (const r of mergeRuns({ runs: v.runs, load, startAfter: 'a', withTombstones: true }))
      all.push(`${r.key}${r.tomb ? '†' : ''}`);
    expect(all).toEqual(['b', 'c†', 'd']);
  });

  it('lookupStates loads only the runs whose key range can hold a wanted key', async () => {
    const { write, load, loads } = runs();
    const v: TableVersion = {
      runs: [
        write([
          ['a', 1],
          ['b', 1],
        ]),
        write([
          ['m', 1],
          ['n', 1],
        ]),
        write([
          ['x', 1],
          ['y', 1],
        ]),
      ],
    };
    const states = await lookupStates(v, ['n', 'nope'], load);
    expect([...states.keys()]).toEqual(['n']);
    expect(loads()).toBe(1);
  });

  it('a lookup spread over many segments reads them a few ahead of its visit, and only the segments that may hold a key', async () => {
    const r = runs();
    const key = (i: number) => `k${String(i).padStart(5, '0')}`;
    // 50 segments of 100 keys; one wanted key in each of 40 of them, and one no segment holds.
    const v: TableVersion = {
      runs: [
        r.write(
          Array.from({ length: 5000 }, (_, i): [string, number] => [key(i), i]),
          100,
        ),
      ],
    };
    const wanted = [...Array.from({ length: 40 }, (_, n) => key(n * 100 + 7)), 'k99999'];
    const { slow, most } = roundTrips(r.load);
    const states = await lookupStates(v, wanted, slow);
    expect([...states.keys()]).toEqual(wanted.slice(0, 40));
    expect(r.loads()).toBe(40);
    expect(most()).toBeGreaterThan(4);
  });

  it('lookupStates reads small candidate runs at once, and the newest state still wins', async () => {
    const { write, load } = runs();
    const propsOf = (m: Map<string, RunRow>, k: string) => m.get(k)?.props;
    const { slow, most, reset } = roundTrips(load);
    // Three small runs whose ranges all hold 'k': one round trip for all three, not three.
    const v: TableVersion = {
      runs: [
        write([
          ['a', 1],
          ['k', 1],
          ['z', 1],
        ]),
        write([
          ['b', 2],
          ['y', 2],
        ]),
        write([
          ['c', 3],
          ['k', 3],
          ['x', 3],
        ]),
      ],
    };
    expect(propsOf(await lookupStates(v, ['k'], slow), 'k')).toEqual({ id: 'k', v: 3 });
    expect(most()).toBe(3);
    expect(propsOf(await lookupStates(v, ['a', 'b'], slow), 'b')).toEqual({ id: 'b', v: 2 });
    // A run too big to read ahead is read only when the lookup reaches it.
    reset();
    const big = write(Array.from({ length: 4000 }, (_, i) => [`m${String(i).padStart(5, '0')}`, i] as [string, number]));
    expect(big.bytes).toBeGreaterThan(READ_AHEAD_RUN_BYTES);
    const w: TableVersion = {
      runs: [
        big,
        write([
          ['m00001', -1],
          ['m99999', -1],
        ]),
      ],
    };
    expect(propsOf(await lookupStates(w, ['m00001'], slow), 'm00001')).toEqual({ id: 'm00001', v: -1 });
    expect(most()).toBe(1);
  });

  it('scanPrefix reads the keys with a prefix, in order', async () => {
    const { write, load } = runs();
    const v: TableVersion = {
      runs: [
        write([
          ['ab', 1],
          ['b', 1],
        ]),
        write([
          ['aa', 2],
          ['ac', null],
        ]),
      ],
    };
    const keys: string[] = [];
    for await (const r of scanPrefix(v, load, 'a')) keys.push(r.key);
    expect(keys).toEqual(['aa', 'ab']);
  });

  async function agreesWithMap(alphabet: string[], probes: string[]): Promise<void> {
    const runArb = fc.array(fc.tuple(fc.constantFrom(...alphabet), fc.option(fc.integer({ min: 0, max: 3 }), { nil: null })), {
      maxLength: 5,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(runArb, { minLength: 1, maxLength: 5 }), fc.array(runArb, { maxLength: 3 }), async (baseRuns, extra) => {
        const { write, load } = runs();
        const dedupe = (r: [string, number | null][]) => [...new Map(r)];
        // Some runs are segmented (two rows a segment), so merges cross segment ends inside a run.
        const base: TableVersion = { runs: baseRuns.map((r, i) => write(dedupe(r), i % 2 === 1 ? 2 : undefined)) };
        const v: TableVersion = { runs: [...base.runs, ...extra.map((r, i) => write(dedupe(r), i % 2 === 0 ? 2 : undefined))] };
        const model = (runsOf: [string, number | null][][]) => {
          const m = new Map<string, number | null>();
          for (const r of runsOf) for (const [k, x] of dedupe(r)) m.set(k, x);
          return m;
        };
        const mBase = model(baseRuns);
        const mV = model([...baseRuns, ...extra]);
        const live: [string, unknown][] = [];
        for await (const r of mergeRuns({ runs: v.runs, load })) live.push([r.key, r.props?.v]);
        expect(live).toEqual([...mV].filter(([, x]) => x !== null).sort(([a], [b]) => (a < b ? -1 : 1)));
        expect((await newestRows(v.runs, load)).map((r) => [r.key, r.tomb ? null : r.props?.v])).toEqual(
          [...mV].sort(([a], [b]) => (a < b ? -1 : 1)),
        );
        // The cursor over each key's newest entry hands on the same entries, tombstones included.
        const stateAt = (d: RunData | undefined, at: number) => {
          if (d === undefined) return undefined;
          const r = d.rowAt(at);
          return r.tomb ? null : r.props?.v;
        };
        const heads: [string, unknown][] = [];
        const cursor = await HeadCursor.open({ runs: v.runs, load });
        while (!cursor.done) {
          heads.push([cursor.key, stateAt(cursor.data, cursor.pos)]);
          const wait = cursor.step();
          if (wait !== undefined) await wait;
        }
        expect(heads).toEqual([...mV].sort(([a], [b]) => (a < b ? -1 : 1)));
        // Where each probe's entry is agrees with the looked-up states, aligned with the sorted probes.
        const sortedProbes = [...new Set([...probes, ...alphabet])].sort(compareKey);
        const at = await lookupEntries(v, sortedProbes, load);
        expect(sortedProbes.map((_, i) => stateAt(at.data[i], at.pos[i] as number))).toEqual(
          sortedProbes.map((k) => (mV.has(k) ? mV.get(k) : undefined)),
        );
        const sortedLive = [...mV].filter(([, x]) => x !== null).sort(([a], [b]) => (a < b ? -1 : 1));
        for (const after of probes) {
          const tail: [string, unknown][] = [];
          for await (const r of mergeRuns({ runs: v.runs, load, startAfter: after })) tail.push([r.key, r.props?.v]);
          expect(tail).toEqual(sortedLive.filter(([k]) => k > after));
          const withPrefix: string[] = [];
          for await (const r of scanPrefix(v, load, after)) withPrefix.push(r.key);
          expect(withPrefix).toEqual(sortedLive.map(([k]) => k).filter((k) => k.startsWith(after)));
          expect((await prefixRows(v, load, after)).map((r) => r.key)).toEqual(withPrefix);
          expect((await prefixRowsMany({ v, load, prefixes: [after], limit: 1 })).get(after)?.map((r) => r.key)).toEqual(
            withPrefix.slice(0, 1),
          );
        }
        // Many prefixes at once (overlapping ones too) answer as each would alone.
        const many = await prefixRowsMany({ v, load, prefixes: [...probes, ...alphabet] });
        for (const p of [...probes, ...alphabet])
          expect((many.get(p) ?? []).map((r) => [r.key, r.props?.v])).toEqual(sortedLive.filter(([k]) => k.startsWith(p)));
        const looked = await lookupStates(v, probes, load);
        const stateOf = (m: Map<string, RunRow>, k: string) => (m.has(k) ? (m.get(k)?.tomb ? null : m.get(k)?.props?.v) : undefined);
        for (const k of probes) expect(stateOf(looked, k)).toEqual(mV.has(k) ? mV.get(k) : undefined);
        // One key at a time too, so the least and greatest wanted keys are the key itself (segments are bisected to it).
        for (const k of [...probes, ...alphabet])
          expect(stateOf(await lookupStates(v, [k], load), k)).toEqual(mV.has(k) ? mV.get(k) : undefined);
        // Changes since the base: by shared runs, and by the streamed comparison, give the same answer.
        const expected = [...new Set([...mBase.keys(), ...mV.keys()])].filter((k) => (mBase.get(k) ?? null) !== (mV.get(k) ?? null)).sort();
        const byDelta = [...(await changedStates(base, v, load)).keys()].sort();
        const byCompare: string[] = [];
        for await (const c of compareVersions(base, v, load)) byCompare.push(c.key);
        expect(byDelta.filter((k) => (mBase.get(k) ?? null) !== (mV.get(k) ?? null))).toEqual(expected);
        expect(byCompare.sort()).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  }

  it('property: merged reads, newest rows, lookups, scans and both ways of computing changes agree with a plain map', async () => {
    await agreesWithMap(['a', 'b', 'c', 'd', 'e'], ['a', 'c', 'e', 'z']);
  });

  it("a long walk reads a run's next segments ahead once it has passed one; a page ending in the first reads only that one", async () => {
    const r = runs();
    const big = r.write(
      Array.from({ length: 64 }, (_, i) => [`k${String(i).padStart(3, '0')}`, i] as [string, number]),
      4,
    );
    const { slow, most } = roundTrips(r.load);
    const page: string[] = [];
    for await (const row of mergeRuns({ runs: [big], load: slow })) {
      page.push(row.key);
      if (page.length === 3) break;
    }
    expect(r.loads()).toBe(1);
    const all: string[] = [];
    for await (const row of mergeRuns({ runs: [big], load: slow })) all.push(row.key);
    expect(all).toHaveLength(64);
    // Each of the 16 segments read once (the first again, the page's walk being a separate one).
    expect(r.loads()).toBe(1 + 16);
    expect(most()).toBeGreaterThanOrEqual(4);
  });

  it('a long walk over many runs shares one bound on what it reads ahead', async () => {
    const r = runs();
    // Four runs of 16 segments each, keys interleaved so the walk moves through all four together.
    const wide = [0, 1, 2, 3].map((k) =>
      r.write(
        Array.from({ length: 64 }, (_, i) => [`k${String(i).padStart(3, '0')}-${k}`, i] as [string, number]),
        4,
      ),
    );
    const { slow, most } = roundTrips(r.load);
    let n = 0;
    for await (const _ of mergeRuns({ runs: wide, load: slow })) n++;
    expect(n).toBe(256);
    // Sixteen read ahead across the walk, and one being read per run: never eight per run.
    expect(most()).toBeGreaterThan(4);
    expect(most()).toBeLessThanOrEqual(16 + 4);
  });

  it('a long walk reads the small runs it will merge at once, once it has passed a segment', async () => {
    const r = runs();
    const big = r.write(
      Array.from({ length: 64 }, (_, i) => [`k${String(i).padStart(3, '0')}`, i] as [string, number]),
      4,
    );
    // Small runs, one row each, spread over the big run's range: a deep branch's writes above its fork.
    const small = [10, 20, 30, 40, 50, 60].map((i) => r.write([[`k${String(i).padStart(3, '0')}x`, -i]]));
    const smallKeys = new Set(small.map((x) => x.key));
    let smallInFlight = 0;
    let mostSmall = 0;
    const { slow: slowAll } = roundTrips(r.load);
    const slow = Object.assign(async (ref: RunRef) => {
      const isSmall = smallKeys.has(ref.key);
      if (isSmall) mostSmall = Math.max(mostSmall, ++smallInFlight);
      try {
        return await slowAll(ref);
      } finally {
        if (isSmall) smallInFlight--;
      }
    }, slowAll) as LoadRun;
    const page: string[] = [];
    for await (const row of mergeRuns({ runs: [big, ...small], load: slow })) {
      page.push(row.key);
      if (page.length === 3) break;
    }
    expect(r.loads()).toBe(1);
    const all: string[] = [];
    for await (const row of mergeRuns({ runs: [big, ...small], load: slow })) all.push(row.key);
    expect(all).toHaveLength(70);
    expect(r.loads()).toBe(1 + 16 + 6);
    // The six small runs went out together, not one round trip each as the walk reached them.
    expect(mostSmall).toBe(6);
  });

  it('a page reads every run that can hold its rows in one round trip, and no run past its reach', async () => {
    const key = (i: number) => `k${String(i).padStart(4, '0')}`;
    const rows = (from: number, to: number): [string, number][] => Array.from({ length: to - from }, (_, i) => [key(from + i), from + i]);
    const pageOf = async (list: (r: ReturnType<typeof runs>) => RunRef[], pageRows: number, take: number) => {
      const r = runs();
      const layout = list(r);
      const { timed, waits } = waitedRoundTrips(r.load);
      const keys: string[] = [];
      for await (const row of mergeRuns({ runs: layout, load: timed, opts: { pageRows } })) {
        keys.push(row.key);
        if (keys.length === take) break;
      }
      return { keys, waits: waits(), loads: r.loads() };
    };
    // Tiers in key order (40 + 30 + 20 + 10 rows) and five one-row runs: a page of 80 reaches into the third tier.
    const tiers = (r: ReturnType<typeof runs>) => [
      r.write(rows(0, 40)),
      r.write(rows(40, 70)),
      r.write(rows(70, 90)),
      r.write(rows(90, 100)),
      ...Array.from({ length: 5 }, (_, i) => r.write(rows(100 + i, 101 + i))),
    ];
    const page = await pageOf(tiers, 81, 81);
    expect(page.keys).toEqual(rows(0, 81).map(([k]) => k));
    expect([page.waits, page.loads]).toEqual([1, 3]);
    // A page as big as the table reads every run in that one round trip.
    const whole = await pageOf(tiers, 200, 200);
    expect([whole.keys.length, whole.waits, whole.loads]).toEqual([105, 1, 9]);
    // Interleaved ranges (keys spread over every run): every run may hold the first rows, so all are read at once.
    const spread = await pageOf((r) => [0, 1, 2, 3].map((m) => r.write(rows(0, 40).filter((_, i) => i % 4 === m))), 5, 5);
    expect(spread.keys).toEqual(rows(0, 5).map(([k]) => k));
    expect([spread.waits, spread.loads]).toEqual([1, 4]);
  });

  it('a walk that meets tens of one-row runs compaction has not gathered reads them at once, and segment indexes are read together', async () => {
    const key = (i: number) => `k${String(i).padStart(4, '0')}`;
    const rows = (from: number, to: number): [string, number][] => Array.from({ length: to - from }, (_, i) => [key(from + i), from + i]);
    const walk = async (layout: (r: ReturnType<typeof runs>) => RunRef[]): Promise<{ waits: number; keys: number }> => {
      const r = runs();
      const list = layout(r);
      const { timed, waits } = waitedRoundTrips(r.load);
      let keys = 0;
      for await (const _ of mergeRuns({ runs: list, load: timed })) keys++;
      return { waits: waits(), keys };
    };
    // Tiers in key order, then forty one-row runs compaction has not gathered yet.
    const behind = await walk((r) => [
      r.write(rows(0, 400)),
      r.write(rows(400, 480)),
      ...Array.from({ length: 40 }, (_, i) => r.write(rows(480 + i, 481 + i))),
    ]);
    expect(behind.keys).toBe(520);
    // The two tiers one after another, then all forty at once: three round trips, not 42.
    expect(behind.waits).toBe(3);
    // A page that ends in the first tier reads none of the one-row runs.
    const r0 = runs();
    const layout = [r0.write(rows(0, 400)), ...Array.from({ length: 40 }, (_, i) => r0.write(rows(480 + i, 481 + i)))];
    let page = 0;
    for await (const _ of mergeRuns({ runs: layout, load: r0.load })) if (++page === 10) break;
    expect(r0.loads()).toBe(1);
    // Settled, a few runs are read as the walk reaches each: a page that ends in the first reads only that one.
    const settled = await walk((r) => [r.write(rows(0, 300)), r.write(rows(300, 380)), r.write(rows(380, 400)), r.write(rows(400, 410))]);
    expect(settled.keys).toBe(410);
    expect(settled.waits).toBe(4);
    // Several segmented runs: their segment indexes are read together.
    const r = runs();
    const segmented = [r.write(rows(0, 300), 100), r.write(rows(300, 600), 100), r.write(rows(600, 900), 100)];
    let indexesInFlight = 0;
    let mostIndexes = 0;
    const load = Object.assign(async (ref: RunRef) => r.load(ref), r.load, {
      segments: async (ref: RunRef) => {
        mostIndexes = Math.max(mostIndexes, ++indexesInFlight);
        await new Promise((done) => setTimeout(done, 2));
        indexesInFlight--;
        return r.load.segments(ref);
      },
    }) as LoadRun;
    let n = 0;
    for await (const _ of mergeRuns({ runs: segmented, load })) n++;
    expect(n).toBe(900);
    expect(mostIndexes).toBe(3);
  });

  it('a merge of thousands of keys over interleaved and segmented runs hands on every key once, in order, newest first', async () => {
    const { write, load } = runs();
    const key = (i: number) => `k${String(i).padStart(5, '0')}`;
    // Run 1 holds every key, run 2 every third (newer, so it wins there), run 3 deletes every seventh.
    const all = Array.from({ length: 5000 }, (_, i) => i);
    const v: TableVersion = {
      runs: [
        write(
          all.map((i) => [key(i), 1]),
          1000,
        ),
        write(all.filter((i) => i % 3 === 0).map((i) => [key(i), 2])),
        write(
          all.filter((i) => i % 7 === 0).map((i) => [key(i), null]),
          100,
        ),
      ],
    };
    const live: [string, unknown][] = [];
    for await (const r of mergeRuns({ runs: v.runs, load, startAfter: key(10) })) live.push([r.key, r.props?.v]);
    const want = all.filter((i) => i > 10 && i % 7 !== 0).map((i) => [key(i), i % 3 === 0 ? 2 : 1]);
    expect(live).toEqual(want);
    // The cursor hands on the same keys (tombstones too) and waits only for whole batches, not per key.
    const cursor = await HeadCursor.open({ runs: v.runs, load, startAfter: key(10) });
    const keys: string[] = [];
    let waits = 0;
    while (!cursor.done) {
      if (!cursor.data.tombs[cursor.pos]) keys.push(cursor.key);
      const wait = cursor.step();
      if (wait !== undefined) {
        waits++;
        await wait;
      }
    }
    expect(keys).toEqual(want.map(([k]) => k));
    expect(waits).toBeLessThan(20);
  });

  it('runs whose key ranges do not overlap merge as one run does: their keys are not compared among runs one by one', async () => {
    const { write, load } = runs();
    const key = (i: number) => `k${String(i).padStart(5, '0')}`;
    const range = (from: number, to: number, v: number): [string, number][] =>
      Array.from({ length: to - from }, (_, i) => [key(from + i), v]);
    // Tiers a table written in key order leaves: older runs hold lower keys. The newest run overlaps
    // the one before it at one key, which it must win.
    const v: TableVersion = {
      runs: [write(range(0, 400, 1)), write(range(400, 800, 2)), write(range(800, 1000, 3)), write(range(999, 1003, 4))],
    };
    // Count every read of a decoded run's keys: that is the merge's work per key.
    let reads = 0;
    const counted = (async (ref: RunRef) => {
      const data = await load(ref);
      const keys = new Proxy(data.keys, {
        get(target, p, receiver) {
          if (typeof p === 'string' && /^[0-9]+$/.test(p)) reads++;
          return Reflect.get(target, p, receiver);
        },
      });
      return Object.assign(Object.create(Object.getPrototypeOf(data) as object) as RunData, data, { keys });
    }) as LoadRun;
    counted.segments = load.segments;
    const spans: MergeSpan[] = [];
    for await (const batch of mergeSpans({ runs: v.runs, load: counted })) spans.push(...batch);
    const merging = reads;
    const out = spans.flatMap((s) =>
      Array.from({ length: s.to - s.from }, (_, i) => [s.data.keys[s.from + i], s.data.rowAt(s.from + i).props?.v]),
    );
    expect(out).toEqual([...range(0, 400, 1), ...range(400, 800, 2), ...range(800, 999, 3), ...range(999, 1003, 4)]);
    // About a binary search per run; comparing every key among the runs read 3,000 keys.
    expect(merging).toBeLessThan(100);
  });

  it('property: the same with keys too long to record whole, so run entries keep only their prefixes', async () => {
    const long = 'k'.repeat(KEY_BOUND_CHARS + 10);
    await agreesWithMap(
      [`${long}a`, `${long}b`, long, 'a', `${'k'.repeat(KEY_BOUND_CHARS)}`, 'z'],
      [long, `${long}a`, `${long}c`, 'k', 'a', `${'k'.repeat(KEY_BOUND_CHARS)}`],
    );
  });
});
