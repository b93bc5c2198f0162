import { describe, expect, it } from 'vitest';
import { PublicationLanes } from './publication-lanes.js';
import type { Snapshot } from './snapshot.js';

const snap = (version: number) => ({ manifest: { version } }) as unknown as Snapshot;
const tick = () => new Promise((r) => setTimeout(r, 1));

describe('PublicationLanes', () => {
  it('gives turns one at a time, in the order they were asked for, per branch', async () => {
    const lanes = new PublicationLanes();
    const order: string[] = [];
    const first = await lanes.enter('main');
    const waiting = ['a', 'b', 'c'].map((name) =>
      lanes.enter('main').then((t) => {
        order.push(name);
        return t;
      }),
    );
    const other = await lanes.enter('dev');
    await tick();
    expect(order).toEqual([]);
    first.release();
    const a = await waiting[0];
    await tick();
    expect(order).toEqual(['a']);
    a?.release();
    (await waiting[1])?.release();
    (await waiting[2])?.release();
    expect(order).toEqual(['a', 'b', 'c']);
    other.release();
    expect(lanes.active).toBe(0);
  });

  it('hands a built manifest to the next turn as a pending tip, settled by its publication', async () => {
    const lanes = new PublicationLanes();
    const t1 = await lanes.enter('main');
    expect(t1.tip).toBeUndefined();
    const settle = t1.handOn({ snapshot: snap(2), speculable: true, appended: Promise.resolve() });
    const t2 = await lanes.enter('main');
    expect(t2.tip?.state).toBe('pending');
    expect(t2.tip?.snapshot.manifest.version).toBe(2);
    settle(true);
    await expect(t2.tip?.landed).resolves.toBe(true);
    expect(t2.tip?.state).toBe('landed');
    t2.release();
    expect(lanes.active).toBe(0);
  });

  it('forgets a tip that did not land: the next turn sees none', async () => {
    const lanes = new PublicationLanes();
    const t1 = await lanes.enter('main');
    const settle = t1.handOn({ snapshot: snap(2), speculable: true, appended: Promise.resolve() });
    const next = lanes.enter('main');
    settle(false);
    settle(true); // settling twice keeps the first answer
    const t2 = await next;
    expect(t2.tip).toBeUndefined();
    t2.release();
  });

  it('gives up a place in the queue when the caller aborts while waiting, and the queue moves on', async () => {
    const lanes = new PublicationLanes();
    const holder = await lanes.enter('main');
    const ac = new AbortController();
    const aborted = lanes.enter('main', ac.signal);
    const after = lanes.enter('main');
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' });
    holder.release();
    const t = await after;
    t.release();
    t.release(); // idempotent
    expect(lanes.active).toBe(0);
  });
});
