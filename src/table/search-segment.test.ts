import { describe, expect, it } from 'vitest';
import { parseSchema, formatSchema } from '../model/schema-parser.js';
import { findType, type TableType } from '../model/schema.js';
import { MemoryRunData, type RunRow } from './run.js';
import { buildSegment, decodeSegment, encodeSegment, searchSpecOf } from './search-segment.js';
import { liveIndex, rank } from './search-rank.js';

const schema = parseSchema(`node Doc {
  id: string @key
  body: string? @search(stem: english)
  emb: vector(3)? @index(metric: l2)
}`);
const type = findType(schema, 'Doc') as TableType;
const row = (key: string, props: Record<string, unknown> | null): RunRow =>
  ({ key, tomb: props === null, hash: key, props: props ?? undefined }) as RunRow;

describe('search segments', () => {
  it('read back from their stored bytes exactly as built', async () => {
    const data = new MemoryRunData(
      type,
      [row('a', { id: 'a', body: 'Naïve résumé 東京', emb: [1, 2, 3] }), row('b', null), row('c', { id: 'c', body: null, emb: null })],
      10,
    );
    const spec = searchSpecOf(type);
    const seg = await buildSegment(spec, [data]);
    const back = decodeSegment(encodeSegment(seg));
    expect(back).toEqual(seg);
    expect([...(seg.fields[0]?.postings.keys() ?? [])].sort()).toEqual(['naïv', 'résumé', '東京'].sort());
    expect(decodeSegment(new Uint8Array([1, 2, 3]))).toBeUndefined();
  });

  it('hide rows a newer run replaced or deleted, and count statistics over the live rows only', async () => {
    const spec = searchSpecOf(type);
    // The older run in two pieces, read as one sequence of positions.
    const old = await buildSegment(spec, [
      new MemoryRunData(type, [row('a', { id: 'a', body: 'invoice invoice', emb: [0, 0, 0] })], 1),
      new MemoryRunData(type, [row('b', { id: 'b', body: 'invoice', emb: [5, 5, 5] })], 1),
    ]);
    expect(old.keys).toEqual(['a', 'b']);
    const newer = await buildSegment(spec, [
      new MemoryRunData(type, [row('a', { id: 'a', body: 'refund', emb: [9, 9, 9] }), row('b', null)], 1),
    ]);
    const ix = await liveIndex(spec, [old, newer]);
    expect(ix.liveRows).toBe(1);
    expect(ix.fieldStats).toEqual([{ docs: 1, length: 1 }]);
    expect(await rank(spec, ix, { text: 'invoice', first: 10 })).toEqual([]);
    expect((await rank(spec, ix, { near: { vector: [9, 9, 9], property: 0, k: 5 }, first: 10 })).map((h) => [h.key, h.distance])).toEqual([
      ['a', 0],
    ]);
  });

  it('is declared in the schema language and formatted back', () => {
    expect(parseSchema(formatSchema(schema))).toEqual(schema);
    expect(() => parseSchema('node A { id: string @key\n n: int @search }')).toThrow(/@search applies to string/);
    expect(() => parseSchema('node A { id: string @key\n v: vector(0) }')).toThrow(/1 to 4096/);
    expect(() => parseSchema('node A { id: string @key\n n: int\n v: vector(2) @embed(from: n) }')).toThrow(/must name a string property/);
    expect(() => parseSchema('node A { id: string @key\n t: string?\n v: vector(2) @embed(from: t) }')).toThrow(/optional vector/);
    expect(() => parseSchema('node A { id: string @key\n v: vector(2) @index(metric: hamming) }')).toThrow(/"cosine" or "l2" or "dot"/);
    expect(() => parseSchema('node A { v: vector(2) @key }')).toThrow(/key property cannot be vector/);
  });
});
