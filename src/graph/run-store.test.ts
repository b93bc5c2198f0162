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
