import {
  Bool,
  Dictionary,
  Float64,
  Int32,
  Int64,
  RecordBatch,
  Table,
  tableFromArrays,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
  type Vector,
} from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import { parseSchema } from '../model/schema-parser.js';
import { rowHash, type Row } from '../model/values.js';
import { readArrowFile } from './read-arrow-file.js';
import { decodeRun, type RunRow } from './run.js';
import { encodeRun } from './run-encode.js';

const type = parseSchema('node T { id: string @key\n s: string?\n n: int?\n f: float?\n b: bool?\n d: date?\n j: json?\n e: enum(x, y)? }')
  .types[0] as NonNullable<ReturnType<typeof parseSchema>['types'][0]>;

/** Every column's values as Arrow's own reader gives them, beside this reader's. */
function bothReadings(bytes: Uint8Array): { ours: Record<string, unknown[]>; arrow: Record<string, unknown[]>; rows: number } {
  const file = readArrowFile(bytes);
  if (file === undefined) throw new Error('the reader refused a run file');
  const t = tableFromIPC(bytes);
  const values = (v: Vector | null) => (v === null ? [] : Array.from({ length: v.length }, (_, i) => v.get(i) as unknown));
  const ours: Record<string, unknown[]> = {};
  const arrow: Record<string, unknown[]> = {};
  for (const f of t.schema.fields) {
    ours[f.name] = values(file.column(f.name));
    arrow[f.name] = values(t.getChild(f.name));
  }
  expect([...file.metadata]).toEqual([...t.schema.metadata]);
  expect(file.numRows).toBe(t.numRows);
  return { ours, arrow, rows: t.numRows };
}

const rowArb = fc.record({
  s: fc.option(fc.string({ unit: 'binary', maxLength: 12 })),
  n: fc.option(fc.maxSafeInteger()),
  f: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  b: fc.option(fc.boolean()),
  d: fc.option(fc.constantFrom('2026-01-02', '1999-12-31')),
  j: fc.option(fc.jsonValue({ maxDepth: 2 })),
  e: fc.option(fc.constantFrom('x', 'y')),
});

describe('Arrow run files read in place', () => {
  it('give every column exactly as Arrow’s own reader does, for any rows, nulls and text', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(rowArb, fc.boolean()), { minLength: 1, maxLength: 80 }), (drawn) => {
        const rows: RunRow[] = drawn.map(([props, tomb], i) => {
          const key = `k${String(i).padStart(3, '0')}`;
          const row: Row = { id: key, ...(props as Row) };
          return tomb ? { key, tomb: true, hash: '', props: null } : { key, tomb: false, hash: rowHash(row), props: row };
        });
        const { ours, arrow, rows: n } = bothReadings(encodeRun(type, rows));
        expect(n).toBe(rows.length);
        expect(ours).toEqual(arrow);
      }),
      { numRuns: 150 },
    );
  });

  it('read a file whose bytes sit at an odd offset in memory, as a store may hand them over', () => {
    const rows: RunRow[] = [1, 2, 3].map((i) => ({ key: `k${i}`, tomb: false, hash: `h${i}`, props: { id: `k${i}`, n: -i, f: i / 3 } }));
    const bytes = encodeRun(type, rows);
    const odd = new Uint8Array(bytes.length + 3).subarray(3);
    odd.set(bytes);
    const { ours, arrow } = bothReadings(odd);
    expect(ours).toEqual(arrow);
  });

  it('leave files outside the subset to Arrow’s reader, so a run written by other Arrow tools still decodes', () => {
    const int32 = tableFromArrays({ _key: ['a'], n: Int32Array.of(1) });
    const dict = new Table({ _key: vectorFromArray(['a']), e: vectorFromArray(['x'], new Dictionary(new Utf8(), new Int32())) });
    const batch = (keys: string[]) =>
      new RecordBatch({
        _key: vectorFromArray(keys, new Utf8()).data[0],
        _tomb: vectorFromArray(
          keys.map(() => false),
          new Bool(),
        ).data[0],
      });
    const twoBatches = new Table([batch(['a']), batch(['b'])]);
    for (const t of [int32, dict, twoBatches]) expect(readArrowFile(tableToIPC(t, 'file'))).toBeUndefined();

    // A run file written as two record batches reads the same rows through the fallback.
    const hashes = vectorFromArray(['h1', 'h2'], new Utf8());
    const two = new Table([
      new RecordBatch({
        _key: vectorFromArray(['a'], new Utf8()).data[0],
        _tomb: vectorFromArray([false], new Bool()).data[0],
        _hash: hashes.slice(0, 1).data[0],
        n: vectorFromArray([1n], new Int64()).data[0],
        f: vectorFromArray([0.5], new Float64()).data[0],
      }),
      new RecordBatch({
        _key: vectorFromArray(['b'], new Utf8()).data[0],
        _tomb: vectorFromArray([true], new Bool()).data[0],
        _hash: hashes.slice(1, 2).data[0],
        n: vectorFromArray([null], new Int64()).data[0],
        f: vectorFromArray([null], new Float64()).data[0],
      }),
    ]);
    two.schema.metadata.set('branchgraph.format', '1');
    const run = decodeRun({ table: type, bytes: tableToIPC(two, 'file'), objectKey: 'runs/T/two' });
    expect(run.keys).toEqual(['a', 'b']);
    expect(run.tombs).toEqual([false, true]);
    expect(run.rowAt(0).props).toMatchObject({ n: 1, f: 0.5, s: null });
  });

  it('never read out of range: every truncation and every byte damaged in the footer or message is refused or read within the file', () => {
    const rows: RunRow[] = ['a', 'b'].map((k) => ({ key: k, tomb: false, hash: `h${k}`, props: { id: k, s: k, n: 1, b: true } }));
    const bytes = encodeRun(type, rows);
    for (let n = 0; n < bytes.length; n++) expect(readArrowFile(bytes.subarray(0, n))).toBeUndefined();
    for (let i = 0; i < bytes.length; i++) {
      for (const v of [0x00, 0xff, (bytes[i] as number) ^ 0x10]) {
        const bad = bytes.slice();
        bad[i] = v;
        const file = readArrowFile(bad);
        if (file === undefined) continue;
        // What it does read holds together: each column as long as the batch.
        for (const name of ['_key', '_tomb', '_hash', 's', 'n', 'b']) expect(file.column(name)?.length ?? file.numRows).toBe(file.numRows);
        try {
          decodeRun({ table: type, bytes: bad, objectKey: 'runs/T/bad' });
        } catch (e) {
          expect(e).toBeInstanceOf(BranchgraphError);
          expect((e as BranchgraphError).code).toBe('corrupt_object');
        }
      }
    }
  });
});
