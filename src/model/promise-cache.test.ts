import { describe, expect, it } from 'vitest';
import { PromiseCache } from './promise-cache.js';

describe('PromiseCache', () => {
  it('shares one load between concurrent gets, and forgets a failed one', async () => {
    const c = new PromiseCache<string, number>();
    let loads = 0;
    const load = async () => {
      loads++;
      return 7;
    };
    expect(await Promise.all([c.get('a', load), c.get('a', load)])).toEqual([7, 7]);
    expect(loads).toBe(1);
    await expect(c.get('b', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(c.has('b')).toBe(false);
    expect(await c.get('b', async () => 8)).toBe(8);
  });

  it('evicts the least recently used entries past the weight bound, keeping the newest even when heavy', async () => {
    const c = new PromiseCache<string, string>({ maxWeight: 10, weigh: (v) => v.length });
    await c.get('a', async () => 'aaaa');
    await c.get('b', async () => 'bbbb');
    await c.get('a', async () => 'never');
    await c.get('c', async () => 'cccc');
    // b was least recently used.
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([true, false, true]);
    expect(c.weight).toBe(8);
    await c.get('d', async () => 'd'.repeat(50));
    expect([c.size, c.weight]).toEqual([1, 50]);
    c.set('e', 'ee');
    expect([c.has('d'), c.has('e'), c.weight]).toEqual([false, true, 2]);
  });

  it('counts a weight given up front while the load is still running', async () => {
    const c = new PromiseCache<string, string>({ maxWeight: 5 });
    let release = (): void => undefined;
    const slow = c.get('a', () => new Promise<string>((r) => (release = () => r('x'))), 4);
    expect(c.weight).toBe(4);
    await c.get('b', async () => 'y', 4);
    expect(c.has('a')).toBe(false);
    release();
    expect(await slow).toBe('x');
    expect(c.weight).toBe(4);
  });
});
