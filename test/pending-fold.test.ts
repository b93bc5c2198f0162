/**
 * Folding a branch's pending WAL rows into a commit carries every row, from
 * whichever view of the head the caller read: a head whose pending
 * generations were only listed (as catch-up and pushes read it) holds no
 * rows, and a fold from it must still commit them, never mark them folded
 * without them.
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { allRows, embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';

const CTX = { transport: 'embedded' as const };

describe('folding pending rows', () => {
  for (const view of ['read', 'listed'] as const)
    it(`commits every pending row from a head whose rows were ${view}`, async () => {
      const store = new MemoryStore();
      const writer = await serviceOnStore(store, { actor: 'writer', shard: 'writer' });
      const api = embeddedApi(writer, CTX);
      await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int? }' });
      await api.ingest({
        branch: 'main',
        ops: [1, 2, 3].map((i) => ({ op: 'upsert' as const, table: 'P', values: { id: `w${i}`, v: i } })),
      });
      await writer.close();
      const g = Graph.attach(store, { actor: 'folder' });
      const head = await g.branchHead('main', undefined, view === 'listed' ? { pendingListedOnly: true } : {});
      expect(head.pending.generations.length).toBeGreaterThan(0);
      const folded = await g.foldExactly({ branch: 'main', head, message: 'fold' });
      expect(folded.manifest.commit.kind).toBe('catchup');
      const reader = await serviceOnStore(store, { actor: 'reader', shard: 'reader' });
      const committed = await allRows(embeddedApi(reader, CTX), 'P', `commit:${folded.manifest.commit.id}`);
      expect(committed.map((r) => r.key)).toEqual(['w1', 'w2', 'w3']);
      await reader.close();
    });
});
