import { describe, expect, it } from 'vitest';
import { mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { listAll } from '../store/object-store.js';
import { MemoryStore } from '../store/memory-store.js';

const HOUR = 3600_000;

describe('tags', () => {
  it('name a commit for good: reads, branches and diffs at tag:NAME, and a taken name is refused', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a')]);
    const t = await g.createTag('v1', { branch: 'main' }, { message: 'first' });
    expect(t).toMatchObject({ name: 'v1', message: 'first', commit: (await g.branchHead('main')).manifest.commit.id });
    await mustWrite(g, 'main', [person('b')]);
    expect((await g.resolve({ tag: 'v1' })).manifest.commit.id).toBe(t.commit);
    await expect(g.createTag('v1', { branch: 'main' })).rejects.toMatchObject({ code: 'tag_exists', details: { tag: 'v1' } });
    await g.createBranch('hotfix', { tag: 'v1' });
    expect(Object.keys(await rowsOf(g, 'hotfix', 'Person'))).toEqual(['a']);
    await expect(g.resolve({ tag: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(g.createTag('bad name', { branch: 'main' })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await g.listTags()).tags.map((x) => x.name)).toEqual(['v1']);
  });

  it('regression: a taken name is refused before anything is written; a creator that loses the race voids its event', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    await g.createTag('v1', { branch: 'main' });
    const before = (await listAll(store, '')).map((o) => o.key);
    await expect(g.createTag('v1', { branch: 'main' })).rejects.toMatchObject({ code: 'tag_exists' });
    expect((await listAll(store, '')).map((o) => o.key)).toEqual(before);
    // The race: the name looked free, and another creator wrote it first.
    const head = store.head.bind(store);
    store.head = async (key, opts) => (key.startsWith('tags/') ? undefined : head(key, opts));
    await expect(g.createTag('v1', { branch: 'main' })).rejects.toMatchObject({ code: 'tag_exists' });
    const added = (await listAll(store, '')).map((o) => o.key).filter((k) => !before.includes(k));
    expect(added.filter((k) => k.startsWith('events/')).map((k) => k.replace(/\d+/, 'N'))).toEqual(['events/N.json', 'events/N.void']);
  });

  it('keep a tagged commit and its history through GC after its branch is deleted, until the tag goes', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await g.createBranch('exp', { branch: 'main' });
    await mustWrite(g, 'exp', [person('x', { age: 7 })]);
    await g.createTag('exp-result', { branch: 'exp' });
    await g.deleteBranch('exp');
    const later = g.clock() + 2 * HOUR;
    const kept = await g.gc({ now: later });
    expect(kept.deleted.manifests + kept.deleted.runs).toBe(0);
    expect((await rowsOf(g, 'main', 'Person')).x).toBeUndefined();
    const snap = await g.resolve({ tag: 'exp-result' });
    expect(snap.tables.Person?.runs.length).toBeGreaterThan(0);
    await g.createBranch('revived', { tag: 'exp-result' });
    expect((await rowsOf(g, 'revived', 'Person')).x).toMatchObject({ age: 7 });
    await g.deleteBranch('revived');
    await g.deleteTag('exp-result');
    const collected = await g.gc({ now: later + 2 * HOUR });
    expect(collected.deleted.runs).toBeGreaterThan(0);
    expect(await listAll(store, 'tags/')).toEqual([]);
  });

  it('stop GC when a tag cannot be read, as a damaged branch does', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await g.createTag('v1', { branch: 'main' });
    const [obj] = await listAll(store, 'tags/');
    await store.putOverwrite(obj?.key as string, new TextEncoder().encode('{"format": 2'));
    const r = await g.gc({ now: g.clock() + 10 * HOUR });
    expect(r.dryRun).toBe(true);
    expect(r.damagedBranches).toEqual([obj?.key]);
  });
});
