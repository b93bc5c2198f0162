import { describe, expect, it } from 'vitest';
import { mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { LatencyStore } from '../store/latency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { Graph } from './graph.js';
import { PEOPLE_SCHEMA } from '../../test/support/fixtures.js';

async function slowGraph() {
  const g = await Graph.open(new LatencyStore(new MemoryStore(), 3), { actor: 'me' });
  await g.applySchema('main', PEOPLE_SCHEMA);
  return g;
}

describe('group commit', () => {
  it('concurrent writers on one branch land every batch in fewer commits, with no contention', async () => {
    const g = await slowGraph();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => g.write('main', [person(`p${i}`)], { message: `add p${i}` })));
    expect(results.every((r) => r.status === 'published')).toBe(true);
    const ids = new Set(results.map((r) => (r.status === 'published' ? r.commit.id : '')));
    // The first publishes alone; the seven queued behind it go together.
    expect(ids.size).toBe(2);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
    const grouped = results[7];
    if (grouped?.status !== 'published') throw new Error('expected a commit');
    expect(grouped.commit.message).toBe('7 writes: add p1; add p2; add p3; add p4; add p5; add p6; add p7');
    expect(grouped.commit.group?.map((w) => w.message)).toEqual(['add p1', 'add p2', 'add p3', 'add p4', 'add p5', 'add p6', 'add p7']);
    expect(results.map((r) => r.result.inserted)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('each batch is validated after the ones ahead of it, and a refused one fails only its caller', async () => {
    const g = await slowGraph();
    const first = g.write('main', [person('lead')]);
    const a = g.write('main', [person('x', { age: 1 })]);
    const b = g.write('main', [{ op: 'update', table: 'Person', values: { id: 'x', age: 2 } }]);
    const dup = g.write('main', [person('x')]).catch((e: unknown) => e);
    const bad = g.write('main', [person('y'), person('z', { age: 'old' })]).catch((e: unknown) => e);
    const c = g.write('main', [{ op: 'delete', table: 'Person', values: { id: 'lead' } }]);
    const [ra, rb, rc] = await Promise.all([a, b, c, first]);
    expect([ra.status, rb.status, rc.status]).toEqual(['published', 'published', 'published']);
    expect(ra.status === 'published' && rb.status === 'published' && ra.commit.id === rb.commit.id).toBe(true);
    expect(rb.result).toMatchObject({ updated: 1, inserted: 0 });
    expect(await dup).toMatchObject({ code: 'constraint_violation' });
    expect(await bad).toMatchObject({ code: 'constraint_violation' });
    const people = await rowsOf(g, 'main', 'Person');
    expect(Object.keys(people).sort()).toEqual(['x']);
    expect(people.x?.age).toBe(2);
  });

  it('writers with different actors are never in one commit; an aborted caller is dropped', async () => {
    const g = await slowGraph();
    const ac = new AbortController();
    const lead = g.write('main', [person('lead')], { actor: 'alice' });
    const mine = g.write('main', [person('a1')], { actor: 'alice' });
    const theirs = g.write('main', [person('b1')], { actor: 'bob' });
    const gone = g.write('main', [person('a2')], { actor: 'alice', signal: ac.signal }).catch((e: unknown) => e);
    const also = g.write('main', [person('a3')], { actor: 'alice' });
    ac.abort();
    const [rl, rm, rt, ra] = await Promise.all([lead, mine, theirs, also]);
    expect(await gone).toMatchObject({ code: 'aborted' });
    const commitOf = (r: typeof rl) => (r.status === 'published' ? r.commit : undefined);
    expect(commitOf(rm)?.id).toBe(commitOf(ra)?.id);
    expect(commitOf(rt)?.actor).toBe('bob');
    expect([commitOf(rl)?.actor, commitOf(rm)?.actor]).toEqual(['alice', 'alice']);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a1', 'a3', 'b1', 'lead']);
  });

  it('a write alone is published exactly as before: its own message, no group', async () => {
    const g = await peopleGraph();
    const id = await mustWrite(g, 'main', [person('solo')]);
    const head = await g.branchHead('main');
    expect(head.manifest.commit.id).toBe(id);
    expect(head.manifest.commit.group).toBeUndefined();
  });
});
