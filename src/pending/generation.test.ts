import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunStore } from '../graph/run-store.js';
import { isBranchgraphError } from '../model/errors.js';
import { MemoryStore } from '../store/memory-store.js';
import { encodeJson } from '../store/stored-json.js';
import {
  decodeGeneration,
  decodeGenerationInSlices,
  encodeGeneration,
  encodeGenerationInSlices,
  GENERATION_FORMAT,
  readGenerationHeader,
  walKeys,
  type Generation,
} from './generation.js';
import { readPending } from './pending-wal.js';
import { damagedCopies, outcomeOf } from '../../test/support/damaged-copies.js';

const LINEAGE = '01JD0000000000000000000000';
const gen = (shard: string, seq: number, stamp: number, rows: [string, number][] = [['a', seq]]): Omit<Generation, 'checksum'> => ({
  format: GENERATION_FORMAT,
  lineage: LINEAGE,
  shard,
  seq,
  stamp,
  schema: 'h',
  tables: { P: rows.map(([k, v]) => [k, `h${v}`, { id: k, v }]) },
});

describe('generation headers', () => {
  it('name the generation and its stamp from the first bytes, checked against the key', () => {
    const g = gen('w1', 7, 1234);
    const file = encodeGeneration(g);
    expect(readGenerationHeader(file, walKeys.generation(LINEAGE, 'w1', 7))).toEqual({
      lineage: LINEAGE,
      shard: 'w1',
      seq: 7,
      stamp: 1234,
    });
    expect(decodeGeneration(file, walKeys.generation(LINEAGE, 'w1', 7)).stamp).toBe(1234);
    const wrong = (() => {
      try {
        readGenerationHeader(file, walKeys.generation(LINEAGE, 'w1', 8));
      } catch (e) {
        return e;
      }
    })();
    expect(isBranchgraphError(wrong, 'corrupt_object')).toBe(true);
    // An object written with its fields in another order has no header: it is decoded whole instead.
    const { stamp, ...rest } = g;
    expect(readGenerationHeader(encodeJson({ stamp, ...rest }), walKeys.generation(LINEAGE, 'w1', 7))).toBeUndefined();
  });

  it('refuses row states that are not [key, hash, row or null] triples, as corrupt_object', () => {
    const key = walKeys.generation(LINEAGE, 'w1', 1);
    const bad: unknown[] = [[['a', 'h']], [['a', 'h', [1]]], [[1, 'h', null]], [['a', 'h', 'row']], 'states', [['a', 'h', null, 'extra']]];
    for (const states of bad) {
      const err = (() => {
        try {
          decodeGeneration(encodeJson({ ...gen('w1', 1, 1), tables: { P: states } }), key);
        } catch (e) {
          return e;
        }
      })();
      expect(isBranchgraphError(err, 'corrupt_object')).toBe(true);
    }
    expect(decodeGeneration(encodeJson({ ...gen('w1', 1, 1), tables: { P: [['a', '', null]] } }), key).tables.P).toEqual([['a', '', null]]);
  });

  it('listing without decoding orders pending generations exactly as the decoded view does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('w1', 'w2', 'w3'), fc.integer({ min: 0, max: 50 })), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        async (seals, oldForm) => {
          const store = new MemoryStore();
          const next = new Map<string, number>();
          for (const [shard, stamp] of seals) {
            const seq = (next.get(shard) ?? 0) + 1;
            next.set(shard, seq);
            const g = gen(shard, seq, stamp, [[`k${seq % 3}`, stamp]]);
            // Generations from before the header order decode whole; the order must not change.
            const { stamp: s, ...rest } = g;
            await store.putIfAbsent(
              walKeys.generation(LINEAGE, shard, seq),
              oldForm ? encodeJson({ stamp: s, ...rest }) : encodeGeneration(g),
            );
          }
          const manifest = { lineage: LINEAGE, wal: { w1: 0, w2: 0, w3: 0 }, tables: {} };
          const listed = await readPending({ store, runs: new RunStore(store), manifest, lineage: LINEAGE, listOnly: true });
          const view = await readPending({ store, runs: new RunStore(store), manifest, lineage: LINEAGE });
          expect(listed.generations.map((g) => [g.key, g.stamp])).toEqual(view.generations.map((g) => [g.key, g.stamp]));
          expect(listed.runs).toEqual({});
          expect(listed.generations.every((g) => g.rows === undefined)).toBe(true);
          expect(view.generations.every((g) => g.rows?.P === 1)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('large generations, encoded and decoded in slices', () => {
  const key = walKeys.generation(LINEAGE, 'w1', 3);
  // Four rows of 400 KB, one holding text that names the checksum member: 1.6 MB, past the size that takes slices.
  const big = (named: boolean): Omit<Generation, 'checksum'> => ({
    ...gen('w1', 3, 99),
    tables: {
      P: ['a', 'b', 'c', 'd'].map((k, i) => [
        k,
        `h${i}`,
        { id: k, v: i, text: `${named && k === 'c' ? '"$checksum":' : ''}é${'x'.repeat(400_000)}` },
      ]),
    },
  });

  it('writes the bytes the synchronous codec writes, and reads back the same generation', async () => {
    for (const named of [false, true]) {
      const g = big(named);
      const sync = encodeGeneration(g);
      const sliced = await encodeGenerationInSlices(g);
      expect(sync.length).toBeGreaterThan(1024 * 1024);
      expect(Buffer.from(sliced).equals(Buffer.from(sync))).toBe(true);
      expect(await decodeGenerationInSlices(sliced, key)).toEqual(decodeGeneration(sync, key));
    }
  });

  it('refuses what the synchronous codec refuses: a changed byte, a cut, a damaged trailer', async () => {
    const file = encodeGeneration(big(false));
    const outcome = (bytes: Uint8Array, sliced: boolean): Promise<string> =>
      outcomeOf(
        () => (sliced ? decodeGenerationInSlices(bytes, key) : decodeGeneration(bytes, key)),
        (g) => `rows ${g.tables.P?.length}`,
      );
    const variants = damagedCopies(file, {
      lengths: [file.length - 1, file.length - 60],
      flips: [20, file.length >> 1, file.length - 30, file.length - 3],
      mask: 0x01,
    });
    for (const v of variants) {
      const sliced = await outcome(v, true);
      expect(sliced).toBe(await outcome(v, false));
      expect(sliced).toBe('corrupt_object');
    }
  });
});
