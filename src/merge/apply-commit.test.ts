import { describe, expect, it } from 'vitest';
import { commitLog } from '../graph/commit-log.js';
import { mergeBranches, mergeSpec } from './merge.js';
import { mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';

const upd = (values: Record<string, unknown>) => ({ op: 'update' as const, table: 'Person', values });

describe('cherry-pick and revert', () => {
  it('cherry-pick replays one commit of another branch as a one-parent commit, leaving the rest of that branch behind', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a', { age: 1 }), person('b', { age: 2 })]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [person('x')]);
    const picked = await mustWrite(g, 'f', [upd({ id: 'a', age: 10 })]);
    await mustWrite(g, 'f', [person('y')]);
    await mustWrite(g, 'main', [upd({ id: 'b', age: 20 })]);
    const r = await mergeBranches(g.ports, mergeSpec({ source: picked, into: 'main', apply: 'cherry_pick' }));
    expect(r).toMatchObject({
      status: 'success',
      outcome: 'cherry_picked',
      commit: { kind: 'cherry_pick', message: `cherry-pick ${picked} onto main` },
    });
    expect(r.status === 'success' && r.commit?.parents).toHaveLength(1);
    const rows = await rowsOf(g, 'main', 'Person');
    expect([rows.a?.age, rows.b?.age, rows.x, rows.y]).toEqual([10, 20, undefined, undefined]);
    // Again: the change is there already.
    expect(await mergeBranches(g.ports, mergeSpec({ source: picked, into: 'main', apply: 'cherry_pick' }))).toMatchObject({
      outcome: 'already_up_to_date',
      commit: null,
    });
  });

  it('revert undoes one commit, keeping the later ones, and reports a conflict when a later commit changed the same value', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a', { age: 1 }), person('b', { age: 2 })]);
    const bad = await mustWrite(g, 'main', [upd({ id: 'a', age: 99 }), person('c')]);
    await mustWrite(g, 'main', [upd({ id: 'b', age: 3 })]);
    const r = await mergeBranches(g.ports, mergeSpec({ source: bad, into: 'main', apply: 'revert' }));
    expect(r).toMatchObject({ status: 'success', outcome: 'reverted', commit: { kind: 'revert', message: `revert ${bad} onto main` } });
    const rows = await rowsOf(g, 'main', 'Person');
    expect([rows.a?.age, rows.b?.age, rows.c]).toEqual([1, 3, undefined]);

    const again = await mustWrite(g, 'main', [upd({ id: 'a', age: 50 })]);
    await mustWrite(g, 'main', [upd({ id: 'a', age: 51 })]);
    const conflicted = await mergeBranches(g.ports, mergeSpec({ source: again, into: 'main', apply: 'revert' }));
    expect(
      conflicted.status === 'conflicts' && conflicted.report.items.map((c) => [c.kind, c.key, c.property, c.base, c.source, c.target]),
    ).toEqual([['DivergentUpdate', 'a', 'age', 50, 1, 51]]);
    // Resolved like any merge.
    const resolved = await mergeBranches(
      g.ports,
      mergeSpec({
        source: again,
        into: 'main',
        apply: 'revert',
        resolutions: { strategy: 'source-wins' },
      }),
    );
    expect(resolved).toMatchObject({ status: 'success', outcome: 'reverted', resolved: { total: 1 } });
    expect((await rowsOf(g, 'main', 'Person')).a?.age).toBe(1);
  });

  it('refuses what has no change to apply, and a dry run changes nothing', async () => {
    const g = await peopleGraph();
    const [schemaCommit, init] = await commitLog(g.ports.manifests, await g.branchHead('main'));
    await expect(mergeBranches(g.ports, mergeSpec({ source: init?.id as string, into: 'main', apply: 'revert' }))).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('has no parent'),
    });
    await expect(
      mergeBranches(g.ports, mergeSpec({ source: schemaCommit?.id as string, into: 'main', apply: 'revert' })),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('changed the schema'),
    });
    await expect(
      mergeBranches(g.ports, mergeSpec({ source: '01ARZ3NDEKTSV4RRFFQ69G5FAV', into: 'main', apply: 'cherry_pick' })),
    ).rejects.toMatchObject({ code: 'not_found' });
    const c = await mustWrite(g, 'main', [person('a')]);
    const head = (await g.branchHead('main')).manifest.commit.id;
    expect(await mergeBranches(g.ports, mergeSpec({ source: c, into: 'main', apply: 'revert', dryRun: true }))).toMatchObject({
      outcome: 'reverted',
      dryRun: true,
      commit: null,
    });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
  });

  it('regression: a cherry-pick or revert whose change the target already holds is already up to date, and publishes nothing', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a', { age: 1 }), person('b', { age: 2 })]);
    await g.createBranch('f', { branch: 'main' });
    // The same change made on main by hand, not by a pick: the pick's rows differ in runs, not in content.
    const picked = await mustWrite(g, 'f', [upd({ id: 'a', age: 10 }), person('c')]);
    await mustWrite(g, 'main', [upd({ id: 'a', age: 10 }), person('c')]);
    const head = (await g.branchHead('main')).manifest.commit.id;
    expect(await mergeBranches(g.ports, mergeSpec({ source: picked, into: 'main', apply: 'cherry_pick' }))).toMatchObject({
      outcome: 'already_up_to_date',
      commit: null,
    });
    // A revert whose change was already undone by later writes.
    const bad = await mustWrite(g, 'main', [upd({ id: 'b', age: 99 })]);
    await mustWrite(g, 'main', [upd({ id: 'b', age: 2 })]);
    const before = (await g.branchHead('main')).manifest.commit.id;
    expect(await mergeBranches(g.ports, mergeSpec({ source: bad, into: 'main', apply: 'revert' }))).toMatchObject({
      outcome: 'already_up_to_date',
      commit: null,
    });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(before);
    expect(before).not.toBe(head);
    // A pick that changes one row of several still lands.
    const more = await mustWrite(g, 'f', [upd({ id: 'a', age: 10 }), upd({ id: 'b', age: 7 })]);
    expect(await mergeBranches(g.ports, mergeSpec({ source: more, into: 'main', apply: 'cherry_pick' }))).toMatchObject({
      outcome: 'cherry_picked',
    });
    expect((await rowsOf(g, 'main', 'Person')).b?.age).toBe(7);
  });
});
