/**
 * Secondary indexes over in-memory runs: the index rows a change produces,
 * lookups by value through several index runs (tombstones shadow, newest
 * wins), and the reader's exactness whatever sits above the published
 * entry. A fast-check property maintains an index change by change, as the
 * publication loop does, and checks every lookup against a plain map.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableType } from '../model/schema.js';
import { rowHash, type Row } from '../model/values.js';
import { decodeRun, runRefOf, type RunRef, type RunRow } from './run.js';
import { encodeRun } from './run-encode.js';
import {
  buildIndexRows,
  encodeNodeKey,
  encodeUnique,
  IN_SPEC,
  indexChange,
  indexHolders,
  IndexReader,
  indexSpecs,
  indexType,
  mayHoldAnyPrefix,
  mayHoldPrefix,
  runsFingerprint,
  uniqueSpec,
  validIndexes,
} from './secondary-index.js';
import { mergeRuns } from './merge-walk.js';
import type { LoadRun, TableVersion } from './table-version.js';

const prop = (name: string, unique = false) => ({ name, type: { kind: 'string' as const }, optional: true, unique, range: null });
const T: TableType = { kind: 'node', name: 'T', key: ['id'], props: [{ ...prop('id'), optional: false }, prop('e', true)] };
const E: TableType = { kind: 'edge', name: 'E', from: 'T', to: 'T', props: [], key: [], cardinality: null };
const SPEC = uniqueSpec('e');

/** Encoded runs of any table shape, read back through the real decoder; with `segmentRows`, cut into segments that long. */
function store() {
  const files = new Map<string, Uint8Array>();
  const segments = new Map<string, RunRef[]>();
  let n = 0;
  const loader = (type: TableType): LoadRun =>
    Object.assign(
      async (ref: RunRef) => decodeRun({ table: type, bytes: files.get(ref.key) as Uint8Array, objectKey: ref.key, expected: ref }),
      {
        segments: async (ref: RunRef) => segments.get(ref.key) ?? [ref],
      },
    );
  const encoded = (type: TableType, rows: RunRow[]): RunRef => {
    const file = encodeRun(type, rows);
    const key = `runs/${type.name}/${String(++n).padStart(4, '0')}.arrow`;
    files.set(key, file);
    return runRefOf({ key, rows, file });
  };
  const write = (type: TableType, rows: RunRow[], segmentRows?: number): RunRef => {
    const whole = encoded(type, rows);
    if (segmentRows === undefined || rows.length <= segmentRows) return whole;
    const parts: RunRef[] = [];
    for (let i = 0; i < rows.length; i += segmentRows) parts.push(encoded(type, rows.slice(i, i + segmentRows)));
    segments.set(whole.key, parts);
    return { ...whole, segmented: true };
  };
  return { loader, write };
}

const row = (id: string, e: string | null): RunRow => ({ key: id, tomb: false, hash: rowHash({ id, e }), props: { id, e } as Row });
const tomb = (id: string): RunRow => ({ key: id, tomb: true, hash: '', props: null });
const sorted = (rows: RunRow[]): RunRow[] => rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

describe('secondary indexes', () => {
  it('want one index per @unique property and, for edges, one by destination', () => {
    expect(indexSpecs(T).map((s) => s.name)).toEqual(['unique:e']);
    expect(indexSpecs(E).map((s) => s.name)).toEqual(['in']);
    expect(indexType(T, SPEC).name).toBe('T.index-unique-e');
  });

  it('change only when the value does, removing the old entry and adding the new', () => {
    const r = (e: string | null): Row => ({ id: 'k', e });
    expect(indexChange({ spec: SPEC, key: 'k', before: r('a'), after: r('a') })).toEqual([]);
    expect(indexChange({ spec: SPEC, key: 'k', before: null, after: r(null) })).toEqual([]);
    expect(indexChange({ spec: SPEC, key: 'k', before: r('a'), after: r('b') }).map((x) => [x.key, x.tomb])).toEqual([
      [`${encodeUnique('a')}\u0000k`, true],
      [`${encodeUnique('b')}\u0000k`, false],
    ]);
    expect(indexChange({ spec: SPEC, key: 'k', before: r('a'), after: null }).map((x) => x.tomb)).toEqual([true]);
  });

  it('find holders through several runs: a newer tombstone hides an older entry', async () => {
    const s = store();
    const ix = indexType(T, SPEC);
    const first = s.write(
      ix,
      await buildIndexRows(
        SPEC,
        (async function* () {
          yield row('k1', 'x');
          yield row('k2', 'y');
          yield row('k3', 'x');
        })(),
      ),
    );
    const second = s.write(
      ix,
      sorted([...indexChange({ spec: SPEC, key: 'k1', before: { id: 'k1', e: 'x' }, after: { id: 'k1', e: 'z' } })]),
    );
    const v: TableVersion = { runs: [first, second] };
    const found = await indexHolders(v, [encodeUnique('x'), encodeUnique('z'), encodeUnique('nope')], s.loader(ix));
    expect(Object.fromEntries(found)).toEqual({ [encodeUnique('x')]: ['k3'], [encodeUnique('z')]: ['k1'] });
  });

  it("property: holders through segmented runs, a value's entries running across segments, match a plain map", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 150 }), fc.constantFrom('a', 'b', 'c', 'd', null)), {
            minLength: 70,
            maxLength: 120,
          }),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
        fc.integer({ min: 1, max: 4 }),
        // Few values against many entries: the index is searched, not scanned.
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1, maxLength: 2 }),
        async (changes, segmentRows, asked) => {
          const s = store();
          const ix = indexType(T, SPEC);
          const model = new Map<string, string | null>();
          const runs: RunRef[] = [];
          for (const batch of changes) {
            const rows = new Map<string, RunRow>();
            for (const [i, e] of batch) {
              const key = `k${String(i).padStart(2, '0')}`;
              const before = model.get(key);
              for (const r of indexChange({
                spec: SPEC,
                key,
                before: before === undefined ? null : { id: key, e: before },
                after: { id: key, e },
              }))
                rows.set(r.key, r);
              model.set(key, e);
            }
            if (rows.size > 0) runs.push(s.write(ix, sorted([...rows.values()]), segmentRows));
          }
          const found = await indexHolders({ runs }, asked.map(encodeUnique), s.loader(ix));
          const want = new Map<string, string[]>();
          for (const [k, e] of [...model].sort(([a], [b]) => (a < b ? -1 : 1)))
            if (e !== null && (asked as string[]).includes(e)) want.set(encodeUnique(e), [...(want.get(encodeUnique(e)) ?? []), k]);
          // Holders come newest run first; the reader sorts them.
          expect(Object.fromEntries([...found].map(([e, ks]) => [e, [...ks].sort()]))).toEqual(Object.fromEntries(want));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answer for rows above the published entry from those rows, and scan when no index is usable', async () => {
    const s = store();
    const t1 = s.write(T, [row('a', 'x'), row('b', 'y')]);
    const ix = s.write(indexType(T, SPEC), await buildIndexRows(SPEC, mergeRuns({ runs: [t1], load: s.loader(T) })));
    const published = { runs: [t1], indexes: { of: runsFingerprint([t1]), sets: { [SPEC.name]: { runs: [ix] } } } };
    expect(validIndexes(published)).toBeDefined();
    // Pending rows on top: `a` moved to `y`, `c` took `x`.
    const above = s.write(T, [row('a', 'y'), row('c', 'x')]);
    const version = { runs: [t1, above] };
    const reader = (p?: typeof published) =>
      new IndexReader({
        type: T,
        version,
        load: s.loader(T),
        ...(p !== undefined ? { published: p } : {}),
        indexLoad: (spec) => s.loader(indexType(T, spec)),
      });
    const want = { [encodeUnique('x')]: ['c'], [encodeUnique('y')]: ['a', 'b'] };
    expect(Object.fromEntries(await reader(published).holders(SPEC, [encodeUnique('x'), encodeUnique('y')]))).toEqual(want);
    // An entry whose runs changed without its indexes is not trusted; the scan gives the same answer.
    const stale = { ...published, runs: [t1, above] };
    expect(validIndexes(stale)).toBeUndefined();
    expect(Object.fromEntries(await reader(stale).holders(SPEC, [encodeUnique('x'), encodeUnique('y')]))).toEqual(want);
    expect(Object.fromEntries(await reader().holders(SPEC, [encodeUnique('x'), encodeUnique('y')]))).toEqual(want);
  });

  it('property: whether a run may hold any of a batch of values is what testing each value says', () => {
    // Values of a few letters: runs' bounds and the probes then meet, start one another and cut.
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '"'), maxLength: 4 });
    // A run's bounds are entries, `value NUL key`, or parts of one.
    const bound = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '"', '\u0000'), maxLength: 7 });
    fc.assert(
      fc.property(fc.uniqueArray(text, { maxLength: 12 }), bound, bound, fc.boolean(), fc.nat(3), (values, a, b, cut, rows) => {
        // Sorted `value NUL` prefixes, as lookups make them: none starts another.
        const prefixes = values.map((v) => `${v}\u0000`).sort();
        const [lo, hi] = a < b ? [a, b] : [b, a];
        const ref = { key: 'r', rows, tombstones: 0, bytes: 1, minKey: lo, maxKey: hi, checksum: '', ...(cut ? { keysCut: true } : {}) };
        expect(mayHoldAnyPrefix(ref, prefixes)).toBe(prefixes.some((p) => mayHoldPrefix(ref, p)));
      }),
      { numRuns: 3000 },
    );
  });

  it('find incoming edges by the destination node', async () => {
    const s = store();
    const key = (from: string, to: string) => JSON.stringify([from, to]);
    const edge = (from: string, to: string): RunRow => ({ key: key(from, to), tomb: false, hash: '1', props: { from, to } });
    const t1 = s.write(E, sorted([edge('a', 'b'), edge('c', 'b'), edge('b', 'a')]));
    const ix = s.write(indexType(E, IN_SPEC), await buildIndexRows(IN_SPEC, mergeRuns({ runs: [t1], load: s.loader(E) })));
    const published = { runs: [t1], indexes: { of: runsFingerprint([t1]), sets: { in: { runs: [ix] } } } };
    const above = s.write(E, [tomb(key('a', 'b'))]);
    const reader = new IndexReader({
      type: E,
      version: { runs: [t1, above] },
      load: s.loader(E),
      published,
      indexLoad: (spec) => s.loader(indexType(E, spec)),
    });
    const found = await reader.holders(IN_SPEC, [encodeNodeKey('b'), encodeNodeKey('a')]);
    expect(found.get(encodeNodeKey('b'))).toEqual([key('c', 'b')]);
    expect(found.get(encodeNodeKey('a'))).toEqual([key('b', 'a')]);
  });

  it('maintained change by change, always answer as a scan of the table would', async () => {
    const ids = ['k1', 'k2', 'k3', 'k\u0000', '\u{1F600}'];
    const values = ['x', 'y', 'x\u0000', null];
    const change = fc.array(fc.tuple(fc.constantFrom(...ids), fc.option(fc.constantFrom(...values), { nil: undefined })), {
      minLength: 1,
      maxLength: 5,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 6 }), async (changes) => {
        const s = store();
        const state = new Map<string, string | null>();
        const tableRuns: RunRef[] = [];
        const indexRuns: RunRef[] = [];
        for (const c of changes) {
          const next = new Map([...c].map(([id, v]) => [id, v] as const));
          const delta: RunRow[] = [];
          const ixRows: RunRow[] = [];
          for (const [id, v] of next) {
            const before = state.has(id) ? { id, e: state.get(id) as string | null } : null;
            const after = v === undefined ? null : { id, e: v };
            delta.push(after === null ? tomb(id) : row(id, v as string | null));
            ixRows.push(...indexChange({ spec: SPEC, key: id, before, after }));
            if (v === undefined) state.delete(id);
            else state.set(id, v);
          }
          tableRuns.push(s.write(T, sorted(delta)));
          if (ixRows.length > 0) indexRuns.push(s.write(indexType(T, SPEC), sorted(ixRows)));
        }
        const published = { runs: tableRuns, indexes: { of: runsFingerprint(tableRuns), sets: { [SPEC.name]: { runs: indexRuns } } } };
        const reader = new IndexReader({
          type: T,
          version: { runs: tableRuns },
          load: s.loader(T),
          published,
          indexLoad: (spec) => s.loader(indexType(T, spec)),
        });
        const encs = values.filter((v) => v !== null).map((v) => encodeUnique(v));
        const got = await reader.holders(SPEC, encs);
        for (const enc of encs) {
          const want = [...state]
            .filter(([, v]) => v !== null && encodeUnique(v) === enc)
            .map(([id]) => id)
            .sort();
          expect(got.get(enc) ?? []).toEqual(want);
        }
      }),
      { numRuns: 150 },
    );
  });
});
