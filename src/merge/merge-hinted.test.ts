/**
 * A cold merge plans on the heads the branches' hints name while their head
 * reads confirm them: one round trip before planning instead of two, and a
 * hint that is stale, forged or older than a protection rule costs a second
 * plan, never a wrong merge or one the rule forbids.
 */
import { describe, expect, it } from 'vitest';
import { merge, mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { WaveStore } from '../../test/support/wave-store.js';
import { Graph } from '../graph/graph.js';
import { keys } from '../graph/keys.js';
import { MemoryStore } from '../store/memory-store.js';
import { storedText } from '../model/compress-stored.js';
import { encodeJson } from '../store/stored-json.js';

/** main with a, b; f forked and given f1; main given m1 after the fork; every hint landed. */
async function forked(): Promise<{ store: MemoryStore; g: Graph }> {
  const store = new MemoryStore();
  const g = await peopleGraph(store);
  await mustWrite(g, 'main', [person('a'), person('b')]);
  await g.createBranch('f', { branch: 'main' });
  await mustWrite(g, 'f', [person('f1')]);
  await mustWrite(g, 'main', [person('m1')]);
  await g.idle();
  return { store, g };
}

/** A branch's hint as stored now, to put back after the branch moves on. */
async function hintOf(store: MemoryStore, g: Graph, branch: string): Promise<Uint8Array> {
  await g.idle();
  return store.get(keys.branchHint(branch));
}

/** Write `person` on `branch`, then put the branch's hint back as it was before: the commit written. */
async function movedUnderStaleHint(store: MemoryStore, g: Graph, branch: string, id: string): Promise<string> {
  const stale = await hintOf(store, g, branch);
  const newest = await mustWrite(g, branch, [person(id)]);
  await g.idle();
  await store.putOverwrite(keys.branchHint(branch), stale);
  return newest;
}

/** A fresh process's merge of `source` into main. */
async function coldMerge(store: MemoryStore, source: string) {
  return merge(await Graph.open(store, { actor: 'cold' }), source);
}

describe('a cold merge planned on hinted heads', () => {
  it('waits for one round trip before planning: four in all, the protocol floor', async () => {
    const { store } = await forked();
    const waves = new WaveStore(store);
    const cold = await Graph.open(waves, { actor: 'cold' });
    const { value: r, waves: n } = await waves.waves(() => merge(cold, 'f'));
    expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
    // The hints and records; the runs, the base and the head reads' confirming probes; the commit
    // and its event; the manifest.
    expect(n).toBe(4);
    expect(Object.keys(await rowsOf(cold, 'main', 'Person')).sort()).toEqual(['a', 'b', 'f1', 'm1']);
  });

  it('a stale source hint is planned on, found out, and the merge lands the source as it is', async () => {
    const { store, g } = await forked();
    const newest = await movedUnderStaleHint(store, g, 'f', 'f2');
    const r = await coldMerge(store, 'f');
    expect(r).toMatchObject({ status: 'success', outcome: 'merged', sourceHead: newest });
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', 'b', 'f1', 'f2', 'm1']);
  });

  it('a stale target hint costs a second plan on the stored head, and nothing main holds is lost', async () => {
    const { store, g } = await forked();
    const newest = await movedUnderStaleHint(store, g, 'main', 'm2');
    const r = await coldMerge(store, 'f');
    expect(r).toMatchObject({ status: 'success', outcome: 'merged', targetHead: newest });
    const head = await g.branchHead('main');
    expect(head.manifest.commit.parentIds[0]).toBe(newest);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', 'b', 'f1', 'm1', 'm2']);
  });

  it('a target protected since its hint was written refuses the merge and publishes nothing', async () => {
    const { store, g } = await forked();
    const before = await hintOf(store, g, 'main');
    await g.protectBranch('main', { requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change', requiredChecks: [] });
    await g.idle();
    // Whatever protecting wrote, the hint a cold process reads still has the record without the rule.
    await store.putOverwrite(keys.branchHint('main'), before);
    const head = (await g.branchHead('main')).manifest.commit.id;
    await expect(coldMerge(store, 'f')).rejects.toMatchObject({ code: 'branch_protected' });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
  });

  it('a hint carrying another version as its head is not believed', async () => {
    const { store, g } = await forked();
    const old = JSON.parse(storedText(await hintOf(store, g, 'f')).replace(/,"\$checksum":"[0-9a-f]+"\}$/, '}')) as {
      head: { version: number };
    };
    await mustWrite(g, 'f', [person('f2')]);
    const now = JSON.parse(storedText(await hintOf(store, g, 'f')).replace(/,"\$checksum":"[0-9a-f]+"\}$/, '}')) as {
      manifest: string;
    };
    // The old head's number with the new head's manifest: decoding finds the version it really is.
    await store.putOverwrite(keys.branchHint('f'), encodeJson({ ...old, manifest: now.manifest }));
    const r = await coldMerge(store, 'f');
    expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', 'b', 'f1', 'f2', 'm1']);
  });
});
