import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { rowProps } from '../model/schema.js';
import { parseSchema } from '../model/schema-parser.js';
import { rowHash, type Row } from '../model/values.js';
import { isCompressed, storedText } from '../model/compress-stored.js';
import { COMPACT_RUN_ROWS, compareKey, decodeRun, decodeRunOffLoop, MemoryRunData, runRefOf, type RunRow } from './run.js';
import { encodeCompactRun, encodeRun, encodeRunFile, encodeRunFileOffLoop } from './run-encode.js';

const type = parseSchema('node T { id: string @key\n n: int?\n f: float?\n b: bool?\n d: date?\n j: json?\n e: enum(x, y)? }')
  .types[0] as NonNullable<ReturnType<typeof parseSchema>['types'][0]>;

const live = (key: string, props: Row): RunRow => ({
  key,
  tomb: false,
  hash: rowHash({ id: key, ...props }),
  props: { id: key, ...props },
});
const rows: RunRow[] = [
  live('a', { n: -9007199254740991, f: 1.5, b: true, d: '2026-01-02', j: { x: [1, 'two', null] }, e: 'y' }),
  { key: 'b', tomb: true, hash: '', props: null },
  live('c', { n: null, f: null, b: null, d: null, j: null, e: null }),
  live('d\u{1F600}', { n: 0, f: -2.25, b: false, j: [] }),
];
const read = (bytes: Uint8Array, expected = runRefOf({ key: 'k', rows, file: bytes })) =>
  decodeRun({ table: type, bytes, objectKey: 'runs/T/x', expected });

describe('runs of a few rows are compact', () => {
  it('read back exactly as the same rows stored in Arrow do', () => {
    const compact = encodeCompactRun(type, rows);
    const arrow = encodeRun(type, rows);
    expect(compact.length).toBeLessThan(arrow.length / 2);
    const a = read(compact);
    const b = read(arrow);
    expect(a.keys).toEqual(b.keys);
    expect(a.hashes).toEqual(b.hashes);
    expect(a.tombs).toEqual(b.tombs);
    expect(rows.map((_, i) => a.rowAt(i))).toEqual(rows.map((_, i) => b.rowAt(i)));
  });

  it('are stored compressed, and plain ones, as written before compression, read the same rows', () => {
    const stored = encodeCompactRun(type, rows);
    expect(isCompressed(stored)).toBe(true);
    const plain = new TextEncoder().encode(storedText(stored));
    expect(stored.length).toBeLessThan(plain.length);
    const a = read(stored);
    const b = read(plain);
    expect(b.keys).toEqual(a.keys);
    expect(b.hashes).toEqual(a.hashes);
    expect(rows.map((_, i) => b.rowAt(i))).toEqual(rows.map((_, i) => a.rowAt(i)));
  });

  it('are chosen by size: a one-row run is about a tenth of its Arrow file, many rows stay Arrow', () => {
    const one = [live('k', { n: 1 })];
    expect(encodeRunFile(type, one).length).toBeLessThan(encodeRun(type, one).length / 5);
    const many = Array.from({ length: COMPACT_RUN_ROWS + 1 }, (_, i) => live(`k${String(i).padStart(3, '0')}`, { n: i }));
    expect(encodeRunFile(type, many)).toEqual(encodeRun(type, many));
  });

  it('refuse a damaged document as corrupt, never as rows', () => {
    const good = storedText(encodeCompactRun(type, rows));
    const bad = [
      good.replace('branchgraph.rows/1', 'branchgraph.rows/9'),
      good.replace('"rows":[', '"rows":[["a",0,"h",null],'),
      good.replace('["c",0', '["c",2'),
      good.slice(0, -3),
      good.replace('"d\u{1F600}"', '"0"'),
    ];
    for (const text of bad) {
      const bytes = new TextEncoder().encode(text);
      expect(() => decodeRun({ table: type, bytes, objectKey: 'runs/T/x', expected: runRefOf({ key: 'k', rows, file: bytes }) })).toThrow(
        expect.objectContaining({ code: 'corrupt_object' }),
      );
    }
    // A row count or key range other than the manifest's is refused too.
    const bytes = encodeCompactRun(type, rows.slice(0, 3));
    expect(() => read(bytes)).toThrow(expect.objectContaining({ code: 'corrupt_object' }));
  });
});

describe('finding a key in a decoded run', () => {
  it('finds the same position, and the same lower bound, from any earlier start as from the first row, and -1 for an absent key', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 4 }), { maxLength: 200 }),
        fc.string({ maxLength: 4 }),
        fc.nat(),
        (drawn, probe, start) => {
          const keys = [...drawn].sort(compareKey);
          const run = new MemoryRunData(
            type,
            keys.map((key) => ({ key, tomb: true, hash: '', props: null })),
            0,
          );
          const at = keys.indexOf(probe);
          expect(run.find(probe)).toBe(at);
          // Any start at or before the key's place (all of them when it is absent) finds the same.
          const place = keys.filter((k) => compareKey(k, probe) < 0).length;
          expect(run.find(probe, Math.min(start, place))).toBe(at);
          // Its place, present or not, is where the lower bound is, from the first row or any start up to it.
          expect(run.lowerBound(probe)).toBe(place);
          expect(run.lowerBound(probe, Math.min(start, place))).toBe(place);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a decoded run’s columns', () => {
  it('give back every written value, decoded whole as reads of many rows take them', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            n: fc.option(fc.maxSafeInteger(), { freq: 8 }),
            f: fc.option(fc.double({ noDefaultInfinity: true, noNaN: true }), { freq: 8 }),
          }),
          {
            minLength: 1,
            maxLength: 300,
          },
        ),
        (drawn) => {
          const written = drawn.map((p, i) => live(`k${String(i).padStart(4, '0')}`, p));
          const run = read(encodeRun(type, written), runRefOf({ key: 'k', rows: written, file: encodeRun(type, written) }));
          const columns = run.propertyColumns() as readonly (readonly unknown[])[];
          const names = rowProps(type).map((p) => p.name);
          expect(columns[names.indexOf('n')]).toEqual(drawn.map((p) => p.n));
          expect(columns[names.indexOf('f')]).toEqual(drawn.map((p) => (Object.is(p.f, -0) ? -0 : p.f)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('give back text exactly, for columns all ASCII and columns with any Unicode', () => {
    const text = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 8 }));
    fc.assert(
      fc.property(fc.array(fc.record({ key: text, j: fc.option(text, { freq: 4 }) }), { minLength: 1, maxLength: 60 }), (drawn) => {
        const written = [...new Map(drawn.map((d) => [d.key, d])).values()]
          .sort((x, y) => compareKey(x.key, y.key))
          .map((d) => live(d.key, { j: d.j }));
        const file = encodeRun(type, written);
        const columns = read(file, runRefOf({ key: 'k', rows: written, file })).propertyColumns() as readonly (readonly unknown[])[];
        const names = rowProps(type).map((p) => p.name);
        expect(columns[names.indexOf('id')]).toEqual(written.map((r) => r.key));
        expect(columns[names.indexOf('j')]).toEqual(written.map((r) => r.props?.j));
      }),
      { numRuns: 200 },
    );
  });
});

describe('runs of large rows, encoded and decoded off the event loop', () => {
  const wide = parseSchema(`node W { id: string @key\n${Array.from({ length: 40 }, (_, i) => `p${i}: string?`).join('\n')} }`)
    .types[0] as NonNullable<ReturnType<typeof parseSchema>['types'][0]>;
  // Text that deflate cannot shrink much, so the stored run is large too (and inflates on the thread pool).
  const noise = (seed: string, words: number): string =>
    Array.from({ length: words }, (_, j) => ((j + 1) * 2654435761 * (seed.charCodeAt(1) + 1)).toString(36).slice(-6)).join('');
  // 3 rows of 40 properties of 10 KB: 1.2 MB of text, over the size that takes turns and the thread pool.
  const big = ['a', 'b', 'c'].map((k, r) =>
    live(k, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, noise(`${k}${i}`, 1500 + r)]))),
  );
  const props = big.map((r) => ({ ...r, props: { ...(r.props as Row), id: r.key } }));

  it('writes the same bytes as the synchronous encoder, and reads back the same rows', async () => {
    const sync = encodeRunFile(wide, props);
    const offLoop = await encodeRunFileOffLoop(wide, props);
    expect(Buffer.from(offLoop).equals(Buffer.from(sync))).toBe(true);
    expect(isCompressed(offLoop)).toBe(true);
    expect(offLoop.length, 'large enough to inflate on the thread pool').toBeGreaterThan(16 * 1024);
    const ref = runRefOf({ key: 'k', rows: props, file: offLoop });
    const read = await decodeRunOffLoop({ table: wide, bytes: offLoop, objectKey: 'k', expected: ref });
    const same = decodeRun({ table: wide, bytes: sync, objectKey: 'k', expected: ref });
    expect(read.length).toBe(3);
    for (let i = 0; i < 3; i++) {
      expect(read.rowAt(i)).toEqual(same.rowAt(i));
      expect(read.rowAt(i)).toEqual(props[i]);
    }
  });

  it('refuses a damaged or mislabelled large run as corrupt_object, as the synchronous decoder does', async () => {
    const bytes = await encodeRunFileOffLoop(wide, props);
    const ref = runRefOf({ key: 'k', rows: props, file: bytes });
    const unknownVersion = bytes.slice();
    unknownVersion[1] = 9;
    for (const bad of [unknownVersion, bytes.subarray(0, bytes.length >> 1)])
      await expect(decodeRunOffLoop({ table: wide, bytes: bad, objectKey: 'k', expected: ref })).rejects.toMatchObject({
        code: 'corrupt_object',
      });
    await expect(decodeRunOffLoop({ table: wide, bytes, objectKey: 'k', expected: { ...ref, rows: ref.rows + 1 } })).rejects.toMatchObject({
      code: 'corrupt_object',
    });
  });
});
