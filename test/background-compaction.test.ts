/**
 * Background compaction in a service, and the compaction triggers over
 * REST, GraphQL and the CLI's API.
 */
import { describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { COMPACTION_FANOUT } from '../src/table/compaction-policy.js';
import { gql, testServer } from './support/test-server.js';
import { embeddedApi } from '../src/service/api.js';

const SCHEMA = 'node Item { id: string @key\n v: int }';

describe('background compaction', () => {
  it('a server compacts what writes leave behind, so runs stay logarithmic; rows read the same', async () => {
    const service = await serviceOnStore(new MemoryStore(), { actor: 'me', shard: 'me', compaction: { background: true, delayMs: 1 } });
    service.start();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: SCHEMA });
    for (let i = 0; i < 120; i++) {
      await embeddedApi(service, ctx).write({
        branch: 'main',
        ops: [{ op: 'upsert', table: 'Item', values: { id: `i${i % 100}`, v: i } }],
      });
      // Give the background a turn now and then, as a real client's pauses would.
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 50));
    const head = await service.graph.branchHead('main');
    expect(service.compactor.published).toBeGreaterThan(0);
    expect(head.manifest.tables.Item?.runs.length).toBeLessThanOrEqual(COMPACTION_FANOUT * 4);
    const page = await embeddedApi(service, ctx).rows({ table: 'Item', at: { branch: 'main' }, limit: 1000 });
    expect(page.items).toHaveLength(100);
    expect(page.items.find((r) => r.key === 'i19')?.row.v).toBe(119);
    await service.close();
  });

  it('REST and GraphQL compact on request; nothing due publishes nothing', async () => {
    const s = await testServer();
    const rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: SCHEMA });
    for (let i = 0; i < 3; i++) await rest.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: `i${i}`, v: i } }] });
    expect(await rest.compact({ branch: 'main' })).toEqual({ commit: null, tables: [] });
    const before = (await rest.getBranch({ name: 'main' })).head;
    const full = await rest.compact({ branch: 'main', mode: 'full' });
    // A compaction re-lays the head's commit: the answer names that commit, unchanged.
    expect(full.commit).toMatchObject({ id: before.id, kind: 'write' });
    expect((await rest.getBranch({ name: 'main' })).head.id).toBe(before.id);
    expect(full.tables).toEqual([{ table: 'Item', runsBefore: 3, runsAfter: 1, runsMerged: 3, indexRunsMerged: 0 }]);
    await rest.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: 'x', v: 1 } }] });
    const viaGraphql = await gql(
      s.url,
      'mutation { compact(branch: "main", mode: full) { commit { kind } tables { table runsBefore runsAfter } } }',
    );
    expect(viaGraphql.body.data).toEqual({
      compact: { commit: { kind: 'write' }, tables: [{ table: 'Item', runsBefore: 2, runsAfter: 1 }] },
    });
    await expect(rest.compact({ branch: 'main', tables: ['Nope'] })).rejects.toMatchObject({ code: 'not_found' });
    await expect(rest.compact({ branch: 'main', mode: 'sideways' as 'full' })).rejects.toMatchObject({ code: 'invalid_input' });
    await s.close();
  });
});
