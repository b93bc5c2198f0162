/**
 * One conformance suite for every ObjectStore adapter. Each adapter's test
 * file calls `describeObjectStore` with a factory; anything an adapter cannot
 * honour must be skipped here with the reason written down.
 */
import { describe, expect, it } from 'vitest';
import { storeTime } from './store-clock.js';
import { BranchgraphError } from '../model/errors.js';
import { listAll, type ObjectStore } from './object-store.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof BranchgraphError) return e.code;
    throw e;
  }
}

export interface ConformanceOptions {
  /** Rounds of the 16-writer create-only race. */
  raceRounds?: number;
}

export function describeObjectStore(name: string, open: () => Promise<ObjectStore>, opts: ConformanceOptions = {}): void {
  describe(`ObjectStore conformance: ${name}`, () => {
    it('get of a missing key is object_not_found; head is undefined', async () => {
      const s = await open();
      expect(await codeOf(s.get('missing/key'))).toBe('object_not_found');
      expect(await s.head('missing/key')).toBeUndefined();
    });

    it('putIfAbsent creates once, then refuses with object_exists and keeps the first body', async () => {
      const s = await open();
      await s.putIfAbsent('a/b.json', enc('first'));
      expect(await codeOf(s.putIfAbsent('a/b.json', enc('second')))).toBe('object_exists');
      expect(dec(await s.get('a/b.json'))).toBe('first');
      expect(await s.head('a/b.json')).toMatchObject({ key: 'a/b.json', size: 5 });
    });

    it('keys with characters a URL must escape read back whole, by get, range, head and list', async () => {
      const s = await open();
      // An encoded branch name (`%2F`), and every character a signed request must spell exactly.
      const keys = ['branches/feature%2Fone/00000001.json', "odd/a b+c=d!'()*~é&?#.json"];
      for (const [i, k] of keys.entries()) await s.putIfAbsent(k, enc(`body ${i}`));
      for (const [i, k] of keys.entries()) {
        expect(dec(await s.get(k))).toBe(`body ${i}`);
        expect(dec(await s.get(k, { range: { offset: 5 } }))).toBe(String(i));
        expect(await s.head(k)).toMatchObject({ key: k, size: 6 });
      }
      expect((await listAll(s, 'odd/')).map((o) => o.key)).toEqual([keys[1]]);
    });

    it('stores empty and binary bodies exactly', async () => {
      const s = await open();
      const bin = new Uint8Array(256).map((_, i) => i);
      await s.putIfAbsent('bin', bin);
      await s.putIfAbsent('empty', new Uint8Array(0));
      expect(Buffer.from(await s.get('bin')).equals(Buffer.from(bin))).toBe(true);
      expect((await s.get('empty')).length).toBe(0);
      expect(await s.head('empty')).toMatchObject({ key: 'empty', size: 0 });
      // Bodies on both sides of the sizes a store may read differently (a directory reads small files at once).
      for (const size of [64 * 1024, 1024 * 1024, 1024 * 1024 + 1]) {
        const body = new Uint8Array(size).map((_, i) => (i * 7 + size) % 251);
        await s.putIfAbsent(`sized/${size}`, body);
        expect(Buffer.from(await s.get(`sized/${size}`)).equals(Buffer.from(body))).toBe(true);
      }
    });

    it('reads byte ranges: offset+length, open-ended, suffix, past the end', async () => {
      const s = await open();
      await s.putIfAbsent('r', enc('0123456789'));
      expect(dec(await s.get('r', { range: { offset: 2, length: 4 } }))).toBe('2345');
      expect(dec(await s.get('r', { range: { offset: 7 } }))).toBe('789');
      expect(dec(await s.get('r', { range: { suffix: 4 } }))).toBe('6789');
      expect(dec(await s.get('r', { range: { suffix: 40 } }))).toBe('0123456789');
      expect(dec(await s.get('r', { range: { offset: 8, length: 10 } }))).toBe('89');
      expect((await s.get('r', { range: { offset: 20 } })).length).toBe(0);
      expect((await s.get('r', { range: { offset: 3, length: 0 } })).length).toBe(0);
      expect(await codeOf(s.get('nope', { range: { offset: 0, length: 2 } }))).toBe('object_not_found');
    });

    it('putOverwrite replaces an object', async () => {
      const s = await open();
      await s.putOverwrite('hint', enc('1'));
      await s.putOverwrite('hint', enc('22'));
      expect(dec(await s.get('hint'))).toBe('22');
    });

    it('lists by prefix in byte order, with startAfter, across pages', async () => {
      const s = await open();
      const keys = ['p/a', 'p/a/b', 'p/a-c', 'p/b', 'p/c/d/e', 'q/x', 'p/ü', 'p/A'];
      for (const k of keys) await s.putIfAbsent(k, enc(k));
      const sorted = keys.filter((k) => k.startsWith('p/')).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect((await listAll(s, 'p/')).map((o) => o.key)).toEqual(sorted);
      expect((await listAll(s, 'p/', { pageSize: 2 })).map((o) => o.key)).toEqual(sorted);
      expect((await listAll(s, 'p/', { startAfter: 'p/a-c' })).map((o) => o.key)).toEqual(sorted.filter((k) => k > 'p/a-c'));
      expect((await listAll(s, 'p/a')).map((o) => o.key)).toEqual(['p/a', 'p/a-c', 'p/a/b']);
      expect((await listAll(s, 'p/c/d/')).map((o) => [o.key, o.size])).toEqual([['p/c/d/e', 7]]);
      expect(await listAll(s, 'zzz/')).toEqual([]);
    });

    it('keys with spaces, percent signs, dots and unicode round-trip', async () => {
      const s = await open();
      const keys = ['odd/a b', 'odd/100%', 'odd/.hidden', 'odd/..', 'odd/~tilde~', 'odd/日本'];
      for (const k of keys) await s.putIfAbsent(k, enc(k));
      for (const k of keys) expect(dec(await s.get(k))).toBe(k);
      expect((await listAll(s, 'odd/')).map((o) => o.key).sort()).toEqual([...keys].sort());
    });

    it('list and head say when each object was written, by the store clock, and a rewrite moves it', async () => {
      const s = await open();
      const before = Date.now();
      await s.putIfAbsent('t/1', enc('one'));
      const [listed] = await listAll(s, 't/');
      const headed = await s.head('t/1');
      for (const t of [listed?.lastModified, headed?.lastModified]) {
        expect(typeof t).toBe('number');
        // S3 reports whole seconds; a store on this host agrees with its clock to within that and a little skew.
        expect(Math.abs((t as number) - before)).toBeLessThan(60_000);
      }
      expect(await storeTime(s)).toBeGreaterThanOrEqual(Math.floor((listed?.lastModified as number) / 1000) * 1000);
      // The probe storeTime wrote is gone.
      expect((await listAll(s, 'clock/')).length).toBe(0);
    });

    it('deleteMany removes keys and ignores missing ones', async () => {
      const s = await open();
      for (const k of ['d/1', 'd/2', 'd/3']) await s.putIfAbsent(k, enc(k));
      await s.deleteMany(['d/1', 'd/3', 'd/404']);
      expect((await listAll(s, 'd/')).map((o) => o.key)).toEqual(['d/2']);
      expect(await codeOf(s.get('d/1'))).toBe('object_not_found');
      await s.deleteMany([]);
      // A deleted key can be created again.
      await s.putIfAbsent('d/1', enc('again'));
      expect(dec(await s.get('d/1'))).toBe('again');
    });

    it('every operation honours an aborted signal and writes nothing', async () => {
      const s = await open();
      await s.putIfAbsent('ab/x', enc('x'));
      const ac = new AbortController();
      ac.abort();
      const signal = ac.signal;
      expect(await codeOf(s.get('ab/x', { signal }))).toBe('aborted');
      expect(await codeOf(s.head('ab/x', { signal }))).toBe('aborted');
      expect(await codeOf(s.putIfAbsent('ab/y', enc('y'), { signal }))).toBe('aborted');
      expect(await codeOf(s.putOverwrite('ab/z', enc('z'), { signal }))).toBe('aborted');
      expect(await codeOf(listAll(s, 'ab/', { signal }))).toBe('aborted');
      expect(await codeOf(s.deleteMany(['ab/x'], { signal }))).toBe('aborted');
      expect((await listAll(s, 'ab/')).map((o) => o.key)).toEqual(['ab/x']);
    });

    it('16 concurrent create-only PUTs to one key: exactly one winner, every round', async () => {
      const s = await open();
      const rounds = opts.raceRounds ?? 20;
      for (let round = 0; round < rounds; round++) {
        const key = `race/${round}`;
        const outcomes = await Promise.all(
          Array.from({ length: 16 }, (_, i) => codeOf(s.putIfAbsent(key, enc(`writer-${i}`))).then((code) => ({ i, code }))),
        );
        const winners = outcomes.filter((o) => o.code === 'ok');
        expect(winners).toHaveLength(1);
        expect(outcomes.filter((o) => o.code === 'object_exists')).toHaveLength(15);
        expect(dec(await s.get(key))).toBe(`writer-${winners[0]?.i}`);
      }
    });
  });
}
