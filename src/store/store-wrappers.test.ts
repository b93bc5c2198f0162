import { describe, expect, it } from 'vitest';
import type { BranchgraphError } from '../model/errors.js';
import { CountingStore, diffCounts } from './counting-store.js';
import { FaultStore } from './fault-store.js';
import { LatencyStore } from './latency-store.js';
import { MemoryStore } from './memory-store.js';
import { describeObjectStore } from './object-store.conformance.js';
import { listAll } from './object-store.js';
import { parseStoreUrl } from './open-store.js';
import { PrefixStore } from './prefix-store.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

// Wrappers must be transparent: the same conformance suite holds through them.
describeObjectStore(
  'counting(latency(faults(memory)))',
  async () => new CountingStore(new LatencyStore(new FaultStore(new MemoryStore(), { seed: 7 }), 1)),
);

// A prefixed view sees only its own keys, even beside keys that share the prefix's characters.
describeObjectStore('prefix(memory) beside other graphs', async () => {
  const inner = new MemoryStore();
  for (const k of ['graphs/g', 'graphs/g0/a.json', 'graphs/f/z.json', 'a/b.json', 'zzz']) await inner.putIfAbsent(k, bytes('other'));
  return new PrefixStore(inner, 'graphs/g/');
});

describe('CountingStore', () => {
  it('counts calls and bytes per operation, failures included', async () => {
    const s = new CountingStore(new MemoryStore());
    const before = s.snapshot();
    await s.putIfAbsent('a', bytes('hello'));
    await s.putIfAbsent('a', bytes('x')).catch(() => undefined);
    await s.get('a');
    await s.get('a', { range: { offset: 1, length: 2 } });
    await s.head('a');
    await listAll(s, '');
    await s.deleteMany(['a']);
    const d = diffCounts(s.snapshot(), before);
    expect(d.putIfAbsent).toEqual({ calls: 2, bytesRead: 0, bytesWritten: 6 });
    expect(d.get).toEqual({ calls: 2, bytesRead: 7, bytesWritten: 0 });
    expect(d.head.calls).toBe(1);
    expect(d.list.calls).toBe(1);
    expect(d.deleteMany.calls).toBe(1);
    expect(d.total.calls).toBe(7);
  });
});

describe('FaultStore', () => {
  it('crash at call N: the call has no effect and every later call fails', async () => {
    const inner = new MemoryStore();
    const s = new FaultStore(inner, { crashAtCall: 2 });
    await s.putIfAbsent('a', bytes('1'));
    await expect(s.putIfAbsent('b', bytes('2'))).rejects.toMatchObject({ code: 'store_crashed' });
    await expect(s.get('a')).rejects.toMatchObject({ code: 'store_crashed' });
    expect(await inner.head('b')).toBeUndefined();
    expect(s.hasCrashed).toBe(true);
  });

  it("crash with crashEffect 'after': the write lands but the caller never learns", async () => {
    const inner = new MemoryStore();
    const s = new FaultStore(inner, { crashAtCall: 1, crashEffect: 'after' });
    await expect(s.putIfAbsent('b', bytes('2'))).rejects.toMatchObject({ code: 'store_crashed' });
    expect(await inner.head('b')).toMatchObject({ key: 'b', size: 1 });
  });

  it('failAtCall fails exactly one call', async () => {
    const s = new FaultStore(new MemoryStore(), { failAtCall: 1, failCode: 'store_unavailable' });
    await expect(s.putIfAbsent('a', bytes('1'))).rejects.toMatchObject({ code: 'store_unavailable' });
    await s.putIfAbsent('a', bytes('1'));
  });

  it('transient faults are deterministic for a seed', async () => {
    async function pattern(seed: number): Promise<string> {
      const s = new FaultStore(new MemoryStore(), { seed, transientRate: 0.3 });
      let out = '';
      for (let i = 0; i < 40; i++)
        out += await s.head('k').then(
          () => '.',
          (e: BranchgraphError) => (e.code === 'store_unavailable' ? 'x' : '?'),
        );
      return out;
    }
    expect(await pattern(42)).toBe(await pattern(42));
    expect(await pattern(42)).not.toBe(await pattern(43));
    expect(await pattern(42)).toContain('x');
  });

  it('lost responses: the put landed, the caller saw a transient error', async () => {
    const inner = new MemoryStore();
    const s = new FaultStore(inner, { lostResponseRate: 1 });
    await expect(s.putIfAbsent('a', bytes('1'))).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(await inner.head('a')).toBeDefined();
  });
});

describe('LatencyStore', () => {
  it('delays each call and wakes early on abort', async () => {
    const s = new LatencyStore(new MemoryStore(), 50);
    const t0 = performance.now();
    await s.head('x');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    const ac = new AbortController();
    const p = s.head('x', { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('store URLs', () => {
  it('parses the three schemes and bare paths', () => {
    expect(parseStoreUrl('memory://')).toEqual({ kind: 'memory' });
    expect(parseStoreUrl('file://./data')).toEqual({ kind: 'fs', root: './data' });
    expect(parseStoreUrl('/var/lib/bg')).toEqual({ kind: 'fs', root: '/var/lib/bg' });
    expect(parseStoreUrl('s3://my-bucket/graphs/one?endpoint=http://127.0.0.1:7480&region=eu-west-1', {})).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'graphs/one',
      region: 'eu-west-1',
      forcePathStyle: true,
      endpoint: 'http://127.0.0.1:7480',
    });
  });

  it('rejects unknown schemes and bad buckets with invalid_input', () => {
    for (const bad of ['ftp://x', 's3://B!/x', 'file://', '']) {
      expect(() => parseStoreUrl(bad, {})).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
  });
});
