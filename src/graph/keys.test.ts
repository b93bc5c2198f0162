import { describe, expect, it } from 'vitest';
import { keys, parseKey } from './keys.js';

describe('parseKey', () => {
  const id = '01JD0000000000000000000000';
  it('reads back every collectable key the layout writes', () => {
    expect(parseKey(keys.manifest(id, 7))).toEqual({ kind: 'manifest', lineage: id, version: 7 });
    expect(parseKey(keys.run('Person', id))).toEqual({ kind: 'run', table: 'Person', id });
    expect(parseKey(keys.runIndex('Person', id))).toEqual({ kind: 'run', table: 'Person', id });
    expect(parseKey(keys.runSegment('Person', id, 3))).toEqual({ kind: 'run', table: 'Person', id });
    expect(parseKey(keys.commit(id))).toEqual({ kind: 'commit', id });
    expect(parseKey(keys.hint(id))).toEqual({ kind: 'hint', lineage: id });
    expect(parseKey(keys.branchHint('review/2026.07'))).toEqual({ kind: 'branchHint', name: 'review/2026.07' });
    expect(parseKey(keys.part(id))).toEqual({ kind: 'part', id });
  });

  it('names nothing for keys outside the layout, so GC never judges them', () => {
    for (const k of [
      'manifests/x/12.json',
      'manifests/x',
      'runs/Person',
      'runs/a/b/c/d.arrow',
      'commits/x.txt',
      'hints/a/b.json',
      'hints/branches/a/b.json',
      'hints/branches/..json',
      'parts/a/b.json',
      'other/x',
      '',
      keys.schema('ab'),
    ]) {
      expect(parseKey(k)).toBeUndefined();
    }
  });
});
