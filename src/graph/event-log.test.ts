/**
 * The event log's appends from one process and what readers make of them: numbers are taken in the
 * order asked for and the appends go out together, and a reader never passes a number whose event
 * may still land (event-log.ts).
 */
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import { MemoryStore } from '../store/memory-store.js';
import type { ObjectStore } from '../store/object-store.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { WaveStore } from '../../test/support/wave-store.js';
import { EventLog, type EventDraft } from './event-log.js';

const UNDECIDED_MS = 60_000;
const draft = (n: number): EventDraft => ({
  kind: 'tag_created',
  actor: 'test',
  tag: `t${n}`,
  source: { key: `tags/t${n}.json`, hash: 'h' },
});
const eventKey = (seq: number) => `events/${String(seq).padStart(12, '0')}.json`;

/** Holds, or fails, the calls on chosen keys until told otherwise. */
class KeyedFaults extends StoreWrapper {
  private readonly held = new Map<string, () => void>();
  constructor(
    inner: ObjectStore,
    private readonly rules: { hold?: string[]; fail?: string[] },
  ) {
    super(inner);
  }
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (ctx.op === 'putIfAbsent' && this.rules.fail?.includes(ctx.key)) throw new BranchgraphError('store_error', `refused ${ctx.key}`);
    if (ctx.op === 'putIfAbsent' && this.rules.hold?.includes(ctx.key)) await new Promise<void>((r) => this.held.set(ctx.key, r));
    return call();
  }
  /** Whether a call on `key` is being held. */
  holding(key: string): boolean {
    return this.held.has(key);
  }
  release(key: string): void {
    this.held.get(key)?.();
    this.held.delete(key);
  }
}

function reader(log: EventLog) {
  return (after = 0) => log.page({ after, limit: 100, sourceSays: async () => 'landed', undecidedMs: UNDECIDED_MS });
}

describe('event log appends from one process', () => {
  it('take numbers in the order they were asked for and go out together: five appends take the round trips of one', async () => {
    const mem = new MemoryStore();
    const waves = new WaveStore(mem);
    const log = new EventLog(waves, Date.now);
    await log.append(draft(0));
    const one = await waves.waves(() => log.append(draft(1)));
    const five = await waves.waves(() => Promise.all([2, 3, 4, 5, 6].map((n) => log.append(draft(n)))));
    expect(one.value).toBe(2);
    expect(five.value).toEqual([3, 4, 5, 6, 7]);
    expect(five.waves).toBe(one.waves);
    const page = await reader(log)();
    expect(page.events.map((e) => e.tag)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
  });

  it('a reader waits at a number whose event is still landing, though events after it landed, and reads on once it lands', async () => {
    const mem = new MemoryStore();
    const faults = new KeyedFaults(mem, { hold: [eventKey(2)] });
    const log = new EventLog(faults, Date.now);
    const appends = [1, 2, 3].map((n) => log.append(draft(n)));
    await Promise.all([appends[0], appends[2]]);
    expect(faults.holding(eventKey(2))).toBe(true);
    const read = reader(new EventLog(mem, Date.now));
    const held = await read();
    expect(held.events.map((e) => e.seq)).toEqual([1]);
    expect(held.next).toBe(1);
    expect(held.waitingOn).toMatchObject({ seq: 2, writer: null });
    faults.release(eventKey(2));
    await appends[1];
    expect((await read(held.next)).events.map((e) => e.seq)).toEqual([2, 3]);
  });

  it('a number whose append failed is void at once: readers pass it without waiting', async () => {
    const mem = new MemoryStore();
    const log = new EventLog(new KeyedFaults(mem, { fail: [eventKey(2)] }), Date.now);
    const [a, b, c] = await Promise.allSettled([1, 2, 3].map((n) => log.append(draft(n))));
    expect([a?.status, b?.status, c?.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await log.settle();
    const page = await reader(new EventLog(mem, Date.now))();
    expect(page).toMatchObject({ next: 3, waitingOn: null });
    expect(page.events.map((e) => e.seq)).toEqual([1, 3]);
  });

  it('a failed number that could not be marked void holds readers until the deadline of the event after it', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const clock = () => now;
    const mem = new MemoryStore(clock);
    const log = new EventLog(new KeyedFaults(mem, { fail: [eventKey(2), 'events/000000000002.void'] }), clock);
    await Promise.allSettled([1, 2, 3].map((n) => log.append(draft(n))));
    await log.settle();
    const read = reader(new EventLog(mem, clock));
    const held = await read();
    expect(held).toMatchObject({ next: 1, waitingOn: { seq: 2, deadline: new Date(now + UNDECIDED_MS).toISOString() } });
    now += UNDECIDED_MS + 1;
    const passed = await read(held.next);
    expect(passed.events.map((e) => e.seq)).toEqual([3]);
  });
});
