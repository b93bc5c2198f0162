import { describe, expect, it } from 'vitest';
import { knows, merge, mergeOk, mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { listAll } from '../store/object-store.js';
import { MemoryStore } from '../store/memory-store.js';

const upd = (table: string, values: Record<string, unknown>) => ({ op: 'update' as const, table, values });
const del = (table: string, values: Record<string, unknown>) => ({ op: 'delete' as const, table, values });

/** main and f both change ann: age on both sides (DivergentUpdate), bob deleted on f and updated on main (DeleteVsUpdate), cy inserted on both (DivergentInsert). */
async function conflicted() {
  const store = new MemoryStore();
  const g = Object.assign(await peopleGraph(store), { store });
  await mustWrite(g, 'main', [person('ann', { age: 30, name: 'Ann' }), person('bob', { age: 40 }), knows('ann', 'bob')]);
  await g.createBranch('f', { branch: 'main' });
  await mustWrite(g, 'f', [
    upd('Person', { id: 'ann', age: 31, name: 'Ann L.' }),
    del('Knows', { from: 'ann', to: 'bob' }),
    del('Person', { id: 'bob' }),
    person('cy', { age: 1 }),
  ]);
  await mustWrite(g, 'main', [
    upd('Person', { id: 'ann', age: 32, role: 'admin' }),
    upd('Person', { id: 'bob', age: 41 }),
    person('cy', { age: 2 }),
  ]);
  return g;
}

describe('merge resolutions', () => {
  it('without resolutions, the three kinds of structural conflict are reported', async () => {
    const r = await merge(await conflicted(), 'f');
    expect(r.status === 'conflicts' && r.report.items.map((c) => [c.kind, c.key, c.property])).toEqual([
      ['DivergentUpdate', 'ann', 'age'],
      ['DeleteVsUpdate', 'bob', null],
      ['DivergentInsert', 'cy', null],
    ]);
  });

  it('a strategy resolves every structural conflict, and the commit records how', async () => {
    const g = await conflicted();
    const r = await mergeOk(g, 'f', { resolutions: { strategy: 'source-wins' } });
    const rows = await rowsOf(g, 'main', 'Person');
    // Properties only one side changed still merge: ann keeps main's role and f's name.
    expect(rows.ann).toMatchObject({ age: 31, name: 'Ann L.', role: 'admin' });
    expect(rows.bob).toBeUndefined();
    expect(rows.cy).toMatchObject({ age: 1 });
    expect(r.commit?.resolved).toEqual({
      strategy: 'source-wins',
      digest: expect.any(String),
      total: 3,
      items: [
        { table: 'Person', key: 'ann', property: 'age', kind: 'DivergentUpdate', take: 'source', by: 'strategy' },
        { table: 'Person', key: 'bob', property: null, kind: 'DeleteVsUpdate', take: 'source', by: 'strategy' },
        { table: 'Person', key: 'cy', property: null, kind: 'DivergentInsert', take: 'source', by: 'strategy' },
      ],
    });
    expect(r.resolved).toEqual(r.commit?.resolved);
  });

  it('per-conflict choices win over the strategy: take base, target, or give a value', async () => {
    const g = await conflicted();
    const r = await mergeOk(g, 'f', {
      resolutions: {
        strategy: 'target-wins',
        conflicts: [
          { table: 'Person', key: 'ann', property: 'age', take: 'value', value: 33 },
          { table: 'Person', key: 'bob', take: 'base' },
          { table: 'Person', key: 'cy', property: null, take: 'value', value: { id: 'cy', name: 'Cy', age: 7 } },
        ],
      },
    });
    const rows = await rowsOf(g, 'main', 'Person');
    expect(rows.ann).toMatchObject({ age: 33, name: 'Ann L.', role: 'admin' });
    expect(rows.bob).toMatchObject({ age: 40 });
    expect(rows.cy).toMatchObject({ name: 'Cy', age: 7 });
    expect(r.commit?.resolved?.items.map((i) => [i.key, i.take, i.by])).toEqual([
      ['ann', 'value', 'choice'],
      ['bob', 'base', 'choice'],
      ['cy', 'value', 'choice'],
    ]);
  });

  it('leaves unresolved conflicts reported, and publishes nothing', async () => {
    const g = await conflicted();
    const head = (await g.branchHead('main')).manifest.commit.id;
    const r = await merge(g, 'f', { resolutions: { conflicts: [{ table: 'Person', key: 'ann', property: 'age', take: 'target' }] } });
    expect(r.status === 'conflicts' && r.report.items.map((c) => c.key)).toEqual(['bob', 'cy']);
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
  });

  it('refuses a stale resolution (retryable) when the values it expected moved, and changes nothing', async () => {
    const g = await conflicted();
    const keys = (await listAll(g.store, '')).map((o) => o.key);
    const choice = {
      table: 'Person',
      key: 'ann',
      property: 'age',
      take: 'source' as const,
      expected: { base: 30, source: 31, target: 32 },
    };
    await mustWrite(g, 'main', [upd('Person', { id: 'ann', age: 35 })]);
    const keysAfterWrite = (await listAll(g.store, '')).map((o) => o.key);
    await expect(merge(g, 'f', { resolutions: { strategy: 'source-wins', conflicts: [choice] } })).rejects.toMatchObject({
      code: 'resolution_stale',
      retryable: true,
      details: { table: 'Person', key: 'ann', property: 'age', side: 'target' },
    });
    expect(keys.length).toBeLessThan(keysAfterWrite.length);
    expect((await listAll(g.store, '')).map((o) => o.key)).toEqual(keysAfterWrite);
    // With what is there now, it lands.
    await mergeOk(g, 'f', {
      resolutions: { strategy: 'source-wins', conflicts: [{ ...choice, expected: { base: 30, source: 31, target: 35 } }] },
    });
  });

  it('refuses choices that name no conflict, that have the wrong shape, or that resolve twice', async () => {
    const g = await conflicted();
    await expect(
      merge(g, 'f', {
        resolutions: { strategy: 'source-wins', conflicts: [{ table: 'Person', key: 'ann', property: 'name', take: 'source' }] },
      }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('Person ann name'),
    });
    await expect(
      merge(g, 'f', {
        resolutions: { strategy: 'source-wins', conflicts: [{ table: 'Person', key: 'cy', property: 'age', take: 'source' }] },
      }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('resolve the whole row'),
    });
    await expect(
      merge(g, 'f', { resolutions: { conflicts: [{ table: 'Person', key: 'ann', property: 'age', take: 'value' }] } }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    const twice = { table: 'Person', key: 'bob', take: 'base' as const };
    await expect(merge(g, 'f', { resolutions: { conflicts: [twice, twice] } })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('twice'),
    });
    // A fast-forward has no conflicts to name.
    await g.createBranch('ff', { branch: 'main' });
    await mustWrite(g, 'ff', [person('dee')]);
    await expect(merge(g, 'ff', { resolutions: { conflicts: [twice] } })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('validates resolved rows like a write: bad values are refused, graph rules are conflicts', async () => {
    const g = await conflicted();
    await expect(
      merge(g, 'f', {
        resolutions: { strategy: 'source-wins', conflicts: [{ table: 'Person', key: 'ann', property: 'age', take: 'value', value: 999 }] },
      }),
    ).rejects.toMatchObject({
      code: 'constraint_violation',
    });
    await expect(
      merge(g, 'f', {
        resolutions: {
          strategy: 'source-wins',
          conflicts: [{ table: 'Person', key: 'cy', take: 'value', value: { id: 'zed', name: 'Z' } }],
        },
      }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('changes its key'),
    });
    // A value that takes an email bob holds on main is a UniqueViolation, reported for both rows (bob is resolved too: target-wins).
    await mustWrite(g, 'main', [upd('Person', { id: 'bob', email: 'b@x' })]);
    const r = await merge(g, 'f', {
      resolutions: {
        strategy: 'target-wins',
        conflicts: [{ table: 'Person', key: 'cy', take: 'value', value: { id: 'cy', name: 'Cy', email: 'b@x' } }],
      },
    });
    expect(r.status === 'conflicts' && r.report.items.map((c) => [c.kind, c.key, c.property])).toEqual([
      ['UniqueViolation', 'bob', 'email'],
      ['UniqueViolation', 'cy', 'email'],
    ]);
  });

  it('a dry run previews the resolved merge and publishes nothing', async () => {
    const g = await conflicted();
    const head = (await g.branchHead('main')).manifest.commit.id;
    const r = await mergeOk(g, 'f', { dryRun: true, resolutions: { strategy: 'target-wins' } });
    expect(r).toMatchObject({ dryRun: true, outcome: 'merged', commit: null, resolved: { strategy: 'target-wins', total: 3 } });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
  });
});
