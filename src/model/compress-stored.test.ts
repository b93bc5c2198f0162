import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { bytesHash } from './canonical.js';
import {
  COMPRESS_FROM_BYTES,
  compressStored,
  decompressStored,
  decompressStoredOffLoop,
  isCompressed,
  storedText,
} from './compress-stored.js';
import { damagedCopies, outcomeOf } from '../../test/support/damaged-copies.js';
import { isBranchgraphError } from './errors.js';
import { STORED_DICTIONARY_V1 } from './stored-dictionary.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const EVENT =
  '{"format":1,"seq":7,"time":"2026-12-04T09:55:34.005Z","kind":"commit","actor":"ada","branch":"main","commit":"01M907P1FNGKWAYYDZXRJNTYF1","commitKind":"write","source":{"key":"manifests/01M907NH77X1KSYRCVXMX0KT4Y/000000000007.json","commit":"01M907P1FNGKWAYYDZXRJNTYF1"}}';

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return isBranchgraphError(e) ? e.code : `not a BranchgraphError: ${String(e)}`;
  }
}

describe('compressed stored objects', () => {
  it('version 1 reads objects written with it byte for byte: its dictionary is never edited', () => {
    // Bytes written by version 1. If this fails, stored graphs no longer read: add a version instead.
    expect(bytesHash(STORED_DICTIONARY_V1)).toBe('63006ec796225a6f5f9b18fda716afc4');
    const stored = Buffer.from(
      'AAHDTG3mqKnN0EjXwCTEwNLK1NTK2ETPwMA0Ck8CTExJxJcGDQx9LQ3MAwzd/Ny9wx0jI12iIoK8/EIi3QxJT50Qs/w8zM0jDL2DI4OcwyJ8Iwy8Q0wi9Q0QwBwWzsS4obYWAA==',
      'base64',
    );
    expect(storedText(stored)).toBe(EVENT);
    expect(Buffer.from(compressStored(enc(EVENT))).equals(stored)).toBe(true);
  });

  it('round-trips any text, deterministically, and never grows what it stores', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (json) => {
        const plain = enc(json);
        const stored = compressStored(plain);
        expect(stored.length).toBeLessThanOrEqual(plain.length);
        expect(Buffer.from(compressStored(plain)).equals(Buffer.from(stored))).toBe(true);
        expect(storedText(stored)).toBe(json);
        // Small or incompressible text stays as it is, and reads as plain text always did.
        if (!isCompressed(stored)) expect(stored).toBe(plain);
      }),
      { numRuns: 300 },
    );
    expect(isCompressed(compressStored(enc('x'.repeat(COMPRESS_FROM_BYTES - 1))))).toBe(false);
    expect(isCompressed(compressStored(enc(EVENT)))).toBe(true);
  });

  it('a compressed manifest-sized object is a third of its text or less', () => {
    const runs = Array.from({ length: 4 }, (_, i) => ({
      key: `runs/Item/01M907P1FJGKTSYRTRZHEEH5G${i}.rows.json`,
      rows: 1,
      tombstones: 0,
      bytes: 149,
      minKey: `item000000${i}`,
      maxKey: `item000000${i}`,
      checksum: '8c405e92bdb9362c060ca49a755a2a5b'.replace(/.$/, String(i)),
      origin: `01M907NH77X1KSYRCVXMX0KT4Y:${i + 1}`,
    }));
    const text = JSON.stringify({ format: 3, tables: { d: 0, e: { Item: { runs } } } });
    expect(compressStored(enc(text)).length).toBeLessThan(text.length / 3);
  });

  it('every changed byte, a cut or an unknown version of a compressed object is corrupt_object, never another value', () => {
    const Z = z.record(z.string(), z.unknown());
    const stored = encodeJson(JSON.parse(EVENT));
    expect(isCompressed(stored)).toBe(true);
    expect(decodeJson(Z, stored, 'events/7')).toEqual(JSON.parse(EVENT));
    // Each flip either fails to decode or lands in the unused padding bits after the stream's last code,
    // where it changes nothing read: never a different value.
    let padding = 0;
    for (let i = 1; i < stored.length; i++) {
      for (const flip of [0x01, 0x80]) {
        const bad = stored.slice();
        bad[i] = (bad[i] as number) ^ flip;
        let read: unknown;
        const code = codeOf(() => {
          read = decodeJson(Z, bad, 'events/7');
        });
        if (code === undefined) {
          expect(read, `byte ${i} ^ ${flip}`).toEqual(JSON.parse(EVENT));
          expect(i, 'only the last byte holds padding').toBe(stored.length - 1);
          padding++;
        } else expect(code, `byte ${i} ^ ${flip}`).toBe('corrupt_object');
      }
    }
    expect(padding).toBeLessThanOrEqual(1);
    for (const cut of [2, 3, stored.length >> 1, stored.length - 1])
      expect(
        codeOf(() => decodeJson(Z, stored.subarray(0, cut), 'events/7')),
        `cut at ${cut}`,
      ).toBe('corrupt_object');
    expect(codeOf(() => decompressStored(Uint8Array.of(0, 1), 'k'))).toBe('corrupt_object');
    const unknownVersion = stored.slice();
    unknownVersion[1] = 9;
    expect(codeOf(() => decompressStored(unknownVersion, 'k'))).toBe('corrupt_object');
  });

  it('plain text passes through untouched: objects written before compression read as they were', () => {
    const plain = enc(EVENT);
    expect(decompressStored(plain, 'k')).toBe(plain);
    expect(decodeJson(z.record(z.string(), z.unknown()), plain, 'k')).toEqual(JSON.parse(EVENT));
    // A checksum damaged into other valid JSON does not pass for an object written before checksums.
    const damaged = enc(`${EVENT.slice(0, -1)},"$checksum":"${'0'.repeat(31)}g"}`);
    expect(codeOf(() => decodeJson(z.record(z.string(), z.unknown()), damaged, 'k'))).toBe('corrupt_object');
  });

  it('inflates off the loop to the same bytes, or to the same refusal, as on it: whole, cut or changed', async () => {
    // Large enough to go to the thread pool and to inflate in several chunks.
    const rows = Array.from({ length: 40_000 }, (_, i) => ({ k: `key${i}`, h: bytesHash(enc(String(i))), v: i }));
    const stored = compressStored(enc(JSON.stringify(rows)));
    expect(stored.length).toBeGreaterThan(64 * 1024);
    const outcome = (bytes: Uint8Array, off: boolean): Promise<string> =>
      outcomeOf(
        () => (off ? decompressStoredOffLoop(bytes, 'k') : decompressStored(bytes, 'k')),
        (out) => `bytes ${bytesHash(out)}`,
      );
    expect(await outcome(stored, true)).toBe(`bytes ${bytesHash(enc(JSON.stringify(rows)))}`);
    const variants = damagedCopies(stored, {
      lengths: [stored.length >> 1, stored.length - 1],
      flips: [2, 100, stored.length >> 1, stored.length - 2],
      mask: 0x10,
    });
    for (const v of variants) {
      const off = await outcome(v, true);
      expect(off).toBe(await outcome(v, false));
      expect(off.startsWith('not')).toBe(false);
    }
  });
});
