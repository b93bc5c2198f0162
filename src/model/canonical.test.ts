/**
 * Golden values for the canonical encoding and content hashes. Stored data
 * (row hashes in every run, schema addresses, checksums) depends on these
 * exact strings: a change here would silently make old rows look changed
 * and old schemas unaddressable, so it must be a deliberate, migrated one.
 */
import { describe, expect, it } from 'vitest';
import { bytesHash, canonicalJson, contentHash } from './canonical.js';
import { parseSchema } from './schema-parser.js';
import { rowHash } from './values.js';
import { schemaHashInSlices, schemaHashOf, schemaTextOf, type Schema } from './schema.js';

describe('canonical encoding', () => {
  it('sorts object keys, drops undefined, writes -0 as 0, and keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], u: undefined })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(canonicalJson({ z: { y: 1, x: 2 } })).toBe('{"z":{"x":2,"y":1}}');
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson('é')).toBe('"é"');
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
  });

  it('hashes to pinned values', () => {
    expect(contentHash(canonicalJson(null))).toBe('74234e98afe7498fb5daf1f36ac2d78a');
    expect(contentHash(canonicalJson(1.5))).toBe('9f29a130438b81170b92a42650f9a942');
    expect(contentHash(canonicalJson({ b: 1, a: [true, null, 'x'] }))).toBe('54a65415ad370228851a1da4b31b6fd4');
    expect(contentHash(canonicalJson([1, 'a', { k: 'v' }]))).toBe('bbad8e603d34498fe5f2866fee37a4be');
    expect(rowHash({ id: 'a', name: 'Ann', age: null })).toBe('558982ce1377a0f1c25475dcc4b60e4b');
    expect(bytesHash(new TextEncoder().encode('branchgraph'))).toBe('8df98b42bce12569c8c38944d95dbb22');
  });

  it('addresses a schema by a pinned hash of its canonical form', () => {
    const s = parseSchema('node Person { id: string @key\n name: string\n email: string? @unique }\nedge Knows: Person -> Person');
    expect(schemaHashOf(s)).toBe('f49330ce25b8e01dfb985c0a825fe6f5');
  });

  it("spells a schema's canonical form a type at a time, in one go or in slices, as canonicalJson does", async () => {
    const text = Array.from({ length: 300 }, (_, i) => `node T${i} { id: string @key\n v: int? }`).join('\n');
    const schemas = (): Schema[] => [parseSchema(text), { ...parseSchema(text), queries: [] }, { format: 1, types: [] }];
    for (const s of schemas()) expect(schemaTextOf(s)).toBe(canonicalJson(s));
    for (const s of schemas()) {
      expect(await schemaHashInSlices(s)).toBe(contentHash(canonicalJson(s)));
      expect(schemaHashOf(s)).toBe(contentHash(canonicalJson(s)));
    }
  });
});
