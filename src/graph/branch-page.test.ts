import { describe, expect, it } from 'vitest';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { Graph } from './graph.js';

/** A graph with `n` live branches b0000… beside main, and every third of `deleted` more branches deleted. */
async function withBranches(n: number, deleted = 0): Promise<{ store: CountingStore; graph: Graph }> {
  const store = new CountingStore(new MemoryStore());
  const g = await Graph.open(store);
  for (let i = 0; i < n; i++) await g.createBranch(`b${String(i).padStart(4, '0')}`, { branch: 'main' });
  for (let i = 0; i < deleted; i++) {
    await g.createBranch(`d${i}`, { branch: 'main' });
    await g.deleteBranch(`d${i}`);
  }
  // A fresh process, once the writer's best-effort writes have landed: nothing cached, nothing still arriving.
  await g.idle();
  return { store, graph: await Graph.open(store) };
}

async function allPages(g: Graph, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  do {
    const page = await g.listBranches({ limit, ...(after !== undefined ? { after } : {}) });
    pages.push(page.branches.map((b) => b.record.name));
    after = page.next;
  } while (after !== undefined);
  return pages;
}

describe('branch listing by page', () => {
  it('pages through every live branch exactly once, in name order, skipping deleted ones', async () => {
    const { graph } = await withBranches(25, 9);
    const pages = await allPages(graph, 10);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 6]);
    const names = pages.flat();
    expect(names).toEqual([...names].sort());
    expect(names).toEqual([...Array.from({ length: 25 }, (_, i) => `b${String(i).padStart(4, '0')}`), 'main']);
    // A page exactly as large as what is left has no next page.
    expect((await graph.listBranches({ limit: 26 })).next).toBeUndefined();
    expect((await graph.listBranches({ limit: 25 })).next).toBe('b0024');
  });

  it('a page costs the same store calls with 40 branches as with 800', async () => {
    const calls = async (n: number): Promise<number> => {
      const { store, graph } = await withBranches(n);
      store.reset();
      const page = await graph.listBranches({ limit: 20, after: 'b0010' });
      expect(page.branches).toHaveLength(20);
      return store.snapshot().total.calls;
    };
    expect(await calls(800)).toBe(await calls(40));
  });

  it('a selective filter ends a page short after a bounded look, and its cursor goes on to find every match', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store);
    // Matches more than a thousand names apart: no page looks that far for its next one.
    const wanted = new Set([7, 1150, 1199]);
    for (let i = 0; i < 1200; i++)
      await g.createBranch(`f${String(i).padStart(4, '0')}`, { branch: 'main' }, { traits: wanted.has(i) ? { owner: 'rare' } : {} });
    const keep = (rec: { owner?: string }) => rec.owner === 'rare';
    const pages: { names: string[]; next: string | undefined }[] = [];
    let after: string | undefined;
    do {
      const page = await g.listBranches({ limit: 1, keep, ...(after !== undefined ? { after } : {}) });
      pages.push({ names: page.branches.map((b) => b.record.name), next: page.next });
      after = page.next;
    } while (after !== undefined);
    expect(pages.flatMap((p) => p.names)).toEqual(['f0007', 'f1150', 'f1199']);
    // The first page stopped looking for a second match after a thousand names, with a cursor past its own.
    expect(pages[0]).toEqual({ names: ['f0007'], next: expect.stringMatching(/^f0\d{3}$/) });
    expect(pages[0]?.next).not.toBe('f0007');
    // A prefix lists only its own part of the names.
    expect((await g.listBranches({ prefix: 'f119', limit: 100 })).branches.map((b) => b.record.name)).toHaveLength(10);
  });
});
