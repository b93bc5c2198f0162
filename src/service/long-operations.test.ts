/**
 * Long operations and their progress: the registry's listing and limits,
 * and a merge's reports, which plan the rows it walks and end with all of
 * them done.
 */
import { describe, expect, it } from 'vitest';
import { mustWrite, person, PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import { Graph } from '../graph/graph.js';
import { mergeBranches, mergeSpec } from '../merge/merge.js';
import type { ProgressSink } from '../model/progress.js';
import { MemoryStore } from '../store/memory-store.js';
import { LongOperations } from './long-operations.js';

describe('long operations', () => {
  it('list running ones first, keep finished ones with their outcome, and refuse a bad or busy id', () => {
    let now = Date.UTC(2026, 11, 1);
    const ops = new LongOperations(() => now);
    const a = ops.start({ kind: 'load', branch: 'main', source: null }, { id: 'load-1' });
    a.progress.restart(10);
    a.progress.advance(4);
    now += 1000;
    const b = ops.start({ kind: 'merge', branch: 'main', source: 'f' });
    expect(ops.totals('load')).toEqual({ running: 1, planned: 10, done: 4 });
    ops.finish(a.id, true);
    expect(ops.list().map((o) => [o.id, o.state, o.rowsDone])).toEqual([
      [b.id, 'running', 0],
      ['load-1', 'succeeded', 10],
    ]);
    expect(() => ops.start({ kind: 'merge', branch: 'main', source: 'f' }, { id: b.id })).toThrow(/already running/);
    expect(() => LongOperations.checkId('no spaces')).toThrow(/Operation-Id/);
    now += 11 * 60_000;
    expect(() => ops.get('load-1')).toThrow(/not running here/);
  });

  it('a merge plans the rows it walks, reports them as it goes, and ends with all of them done', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', PEOPLE_SCHEMA);
    await mustWrite(g, 'main', [person('a')]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(
      g,
      'f',
      Array.from({ length: 3000 }, (_, i) => person(`p${i}`)),
    );
    await mustWrite(g, 'main', [person('b')]);
    const seen: string[] = [];
    let planned = 0;
    let done = 0;
    const sink: ProgressSink = {
      restart: (n) => {
        planned = n;
        done = 0;
        seen.push(`restart ${n}`);
      },
      advance: (n) => {
        done += n;
      },
    };
    const r = await mergeBranches(g.ports, mergeSpec({ source: 'f' }), { progress: sink });
    expect(r.status).toBe('success');
    expect(seen).toEqual(['restart 3001']);
    expect(done).toBe(planned);
  });
});
