/**
 * The event feed after a writer dies mid-publication. A server holds a
 * writer lease (graph/writer-lease.ts); a reader waiting on an event whose
 * source has not landed is told what it waits on, passes it once the
 * writer's lease lapses (seconds, not the five-minute publication
 * deadline), and at once when the writer restarts under the same shard.
 * The store's clock is the test's: no test here waits for time.
 */
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../src/model/errors.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { embeddedApi } from '../src/service/api.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { StoreWrapper, type CallContext } from '../src/store/store-wrapper.js';
import { LEASE_TTL_MS } from '../src/graph/writer-lease.js';
import { MAX_PUBLICATION_MS } from '../src/graph/gc.js';

/** A process's view of the store that dies (every call fails, as after kill -9) at its first manifest write. */
class DiesAtManifest extends StoreWrapper {
  dead = false;
  armed = false;
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (this.armed && ctx.op === 'putIfAbsent' && ctx.key.startsWith('manifests/')) this.dead = true;
    if (this.dead) throw new BranchgraphError('store_crashed', 'the process is gone');
    return call();
  }
}

const SCHEMA = 'node P { id: string @key }';
const put = (id: string) => ({ branch: 'main', ops: [{ op: 'upsert' as const, table: 'P', values: { id } }] });

async function crashedWriter() {
  let now = Date.parse('2026-12-01T00:00:00Z');
  const clock = () => now;
  const inner = new MemoryStore(clock);
  const reader = await serviceOnStore(inner, { actor: 'r', shard: 'reader', graph: { clock } });
  await reader.start();
  const dying = new DiesAtManifest(inner);
  const writer = await serviceOnStore(dying, { actor: 'w', shard: 'writer', graph: { clock } });
  await writer.start();
  const api = embeddedApi(writer, { transport: 'embedded', actor: 'w' });
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  const read = embeddedApi(reader, { transport: 'embedded', actor: 'r' });
  const seen = Number((await read.listEvents({ limit: 1000 })).nextCursor);
  dying.armed = true;
  await expect(api.write(put('a'))).rejects.toMatchObject({ code: 'store_crashed' });
  return { inner, clock, reader, read, seen, advance: (ms: number) => (now += ms), writer };
}

describe('the event feed after a writer crashes', () => {
  it('regression: a reader is told what it waits on, and passes the event once the lease lapses, well before the deadline', async () => {
    const { read, seen, advance, reader } = await crashedWriter();
    const held = await read.listEvents({ cursor: String(seen) });
    expect(held).toMatchObject({ events: [], nextCursor: String(seen), waitingOn: { seq: seen + 1, writer: 'writer' } });
    advance(LEASE_TTL_MS + 1000);
    expect(LEASE_TTL_MS + 1000).toBeLessThan(MAX_PUBLICATION_MS / 10);
    const passed = await read.listEvents({ cursor: String(seen) });
    expect(passed).toEqual({ events: [], nextCursor: String(seen + 1), waitingOn: null });
    // What comes after is read at once.
    await embeddedApi(reader, { transport: 'embedded' }).write(put('b'));
    expect((await read.listEvents({ cursor: String(seen) })).events.map((e) => e.kind)).toEqual(['commit']);
    await reader.close();
  });

  it('regression: a writer restarted under the same shard settles its dead incarnation at start', async () => {
    const { inner, clock, read, seen, reader } = await crashedWriter();
    expect((await read.listEvents({ cursor: String(seen) })).waitingOn).toMatchObject({ seq: seen + 1 });
    const again = await serviceOnStore(inner, { actor: 'w', shard: 'writer', graph: { clock } });
    await again.start();
    expect(await read.listEvents({ cursor: String(seen) })).toEqual({ events: [], nextCursor: String(seen + 1), waitingOn: null });
    await again.close();
    await reader.close();
  });

  it('regression: a cursor past the end of the feed is refused, not waited on', async () => {
    const { read, reader } = await crashedWriter();
    await expect(read.listEvents({ cursor: '999999' })).rejects.toMatchObject({ code: 'invalid_input' });
    await reader.close();
  });
});
