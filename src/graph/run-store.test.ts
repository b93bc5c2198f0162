import { describe, expect, it } from 'vitest';
import { parseSchema } from '../model/schema-parser.js';
import { LatencyStore } from '../store/latency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { RunStore } from './run-store.js';

describe('RunStore', () => {
  it('a read another request started and aborted does not fail a caller that shares it', async () => {
    const type = parseSchema('node T { id: string @key\n a: int }').types[0];
    if (type === undefined) throw new Error('no type');
    const inner = new MemoryStore();
    const ref = await new RunStore(inner).write(type, [{ key: 'k', tomb: false, hash: 'h', props: { id: 'k', a: 1 } }]);
    // A cold cache over a slow store: both callers wait on the one read the first started.
    const runs = new RunStore(new LatencyStore(inner, 20));
    const ac = new AbortController();
    const first = runs.load(type, ref, { signal: ac.signal });
    const second = runs.load(type, ref);
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: 'aborted' });
    expect((await second).length).toBe(1);
  });
});

describe('run formats', () => {
  it('reads small runs written as Arrow files by earlier versions beside compact ones, and compacts them together', async () => {
    const { Graph } = await import('./graph.js');
    const { keys } = await import('./keys.js');
    const { encodeRun, runRefOf } = await import('../table/run.js');
    const { rowHash } = await import('../model/values.js');
    const { allRows } = await import('./reads.js');
    const store = new MemoryStore();
    const g = await Graph.open(store);
    await g.applySchema('main', 'node T { id: string @key\n a: int }');
    await g.write('main', [{ op: 'insert', table: 'T', values: { id: 'new', a: 1 } }]);
    const type = (await g.branchHead('main')).schema.types[0] as NonNullable<ReturnType<typeof parseSchema>['types'][0]>;
    // A one-row run as an earlier version wrote it: an Arrow file at the .arrow key.
    const props = { id: 'old', a: 2 };
    const rows = [{ key: 'old', tomb: false, hash: rowHash(props), props }];
    const key = keys.run('T', '01JZZZZZZZZZZZZZZZZZZZZZZZ');
    const bytes = encodeRun(type, rows);
    await store.putIfAbsent(key, bytes);
    await g.ports.publication.commitChange('main', {}, async (head) => ({
      kind: 'write',
      tables: { T: { runs: [...(head.tables.T?.runs ?? []), runRefOf({ key, rows, file: bytes })] } },
      scratch: [],
      result: null,
    }));
    const fresh = await Graph.open(store);
    const runKeys = (await fresh.branchHead('main')).manifest.tables.T?.runs.map((r) => r.key) ?? [];
    expect(runKeys.some((k) => k.endsWith('.rows.json')) && runKeys.some((k) => k.endsWith('.arrow'))).toBe(true);
    const read = async () =>
      (await allRows({ tables: fresh.ports.tables, snap: await fresh.branchHead('main'), table: 'T' })).map((r) => r.row);
    expect(await read()).toEqual([
      { id: 'new', a: 1 },
      { id: 'old', a: 2 },
    ]);
    await fresh.compact('main', { mode: 'full' });
    expect((await fresh.branchHead('main')).manifest.tables.T?.runs.map((r) => r.key.endsWith('.rows.json'))).toEqual([true]);
    expect(await read()).toEqual([
      { id: 'new', a: 1 },
      { id: 'old', a: 2 },
    ]);
  });
});
