import { it, expect } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { cloneFrom, fetchFrom, graphPeer, pushTo } from '../src/graph/sync.js';

it('smoke', async () => {
  const a = await Graph.open(new MemoryStore(), { actor: 'a' });
  await a.applySchema('main', 'node P { id: string @key\n v: int? }');
  await a.write('main', [{ op: 'insert', table: 'P', values: { id: 'x', v: 1 } }]);
  await a.createTag('v1', { branch: 'main' });
  const b = Graph.attach(new MemoryStore(), { actor: 'b' });
  const c = await cloneFrom(b, { remote: 'origin', url: 'mem:a', peer: graphPeer(a), actor: 'b' });
  console.log(JSON.stringify(c));
  const head = await b.branchHead('main');
  expect(head.manifest.commit.id).toBe((await a.branchHead('main')).manifest.commit.id);
  await b.write('main', [{ op: 'insert', table: 'P', values: { id: 'y', v: 2 } }]);
  const p = await pushTo(b, { remote: 'origin', peer: graphPeer(a), branch: 'main', actor: 'b' });
  console.log(JSON.stringify(p));
  await a.write('main', [{ op: 'insert', table: 'P', values: { id: 'z', v: 3 } }]);
  const f = await fetchFrom(b, { remote: 'origin', peer: graphPeer(a) });
  console.log(JSON.stringify(f));
  const r = await b.resolve({ path: { base: { remote: 'origin', remoteBranch: 'main' }, steps: [] } });
  console.log(Object.keys(r.tables), r.manifest.commit.message);
  await b.write('main', [{ op: 'insert', table: 'P', values: { id: 'w', v: 4 } }]);
  await expect(pushTo(b, { remote: 'origin', peer: graphPeer(a), branch: 'main', actor: 'b' })).rejects.toThrow(/fetch, merge/);
});
