/**
 * Following the event feed pauses between empty polls for as long as its
 * client listens: each pause must leave nothing behind on the stream's
 * signal, or a long-lived stream grows without bound.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { followEvents } from '../src/service/follow-events.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';

describe('following the event feed', () => {
  it('leaves no abort listener behind after each idle pause, and ends when the signal aborts', async () => {
    const service = await serviceOnStore(new MemoryStore(), { actor: 'test', shard: 'test' });
    const ac = new AbortController();
    const idle: number[] = [];
    for await (const e of followEvents(service, { after: 0, signal: ac.signal, pollMs: 5, ctx: { transport: 'embedded' } })) {
      if (!('pause' in e)) continue;
      idle.push(getEventListeners(ac.signal, 'abort').length);
      // Twelve pauses: past the ten listeners at which Node warns of a leak.
      if (idle.length === 12) ac.abort();
    }
    expect(idle).toEqual(Array.from({ length: 12 }, () => 0));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    await service.close();
  });
});
