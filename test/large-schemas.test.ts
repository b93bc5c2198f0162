/**
 * Schema changes at the size limits: a new table is reported as created,
 * and a schema of 1,502 tables is replaced in one change whose migration
 * drops every one of them.
 */
import { describe, expect, it } from 'vitest';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';

describe('large schema changes', () => {
  it('regression: a table a change adds is created, not kept; 1,502 tables are dropped in one change', async () => {
    const service = await serviceOnStore(new MemoryStore(), { actor: 'a', shard: 'a' });
    const api = embeddedApi(service, { transport: 'embedded', actor: 'a' });
    const names = Array.from({ length: 1502 }, (_, i) => `T${i}`);
    const applied = await api.applySchema({ branch: 'main', schema: names.map((n) => `node ${n} { id: string @key }`).join('\n') });
    expect(new Set(Object.values(applied.tables))).toEqual(new Set(['create']));
    const replaced = await api.applySchema({ branch: 'main', schema: 'node Only { id: string @key }', migration: { drop: names } });
    expect(replaced.tables).toMatchObject({ Only: 'create', T0: 'drop', T1501: 'drop' });
    expect((await api.getSchema({})).text).toContain('Only');
    await service.close();
  });
});
