import { describe, expect, it } from 'vitest';
import { MAX_BATCH_VERSIONS, type Manifest } from './manifest.js';
import { PublicationLanes, type HandedTip, type LaneTip, type LandingTurn } from './publication-lanes.js';
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
    const { settle } = t1.handOn({ snapshot: snap(2), speculable: true, appended: Promise.resolve() });
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
    const { settle } = t1.handOn({ snapshot: snap(2), speculable: true, appended: Promise.resolve() });
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

  describe('batches', () => {
    /** Four tips, each planned on the one before while it was pending: the first builds on the stored head. */
    async function chain(lanes: PublicationLanes, n: number): Promise<HandedTip[]> {
      const out: HandedTip[] = [];
      for (let i = 0; i < n; i++) {
        const turn = await lanes.enter('main');
        const below = turn.tip;
        out.push(turn.handOn({ snapshot: snap(2 + i), speculable: true, appended: Promise.resolve(), ...(below ? { below } : {}) }));
      }
      return out;
    }
    const versions = (turn: LandingTurn): number[] =>
      typeof turn === 'object' && 'lead' in turn ? turn.lead.map((t) => t.snapshot.manifest.version) : [];

    it('the first tip whose tip below landed leads every ready tip planned on it, in order, and they follow its fate', async () => {
      const lanes = new PublicationLanes();
      const [t2, t3, t4, t5] = (await chain(lanes, 4)) as [HandedTip, HandedTip, HandedTip, HandedTip];
      // t3 and t4 are ready while t2, below them, still writes; t5 is not ready yet.
      const following = [lanes.ready(t3.tip), lanes.ready(t4.tip)];
      const lead = await lanes.ready(t2.tip);
      expect(versions(lead)).toEqual([2, 3, 4]);
      // The leader tells each tip it took what became of the batch, then the tips settle.
      const published = { version: 3 } as unknown as Manifest;
      for (const t of (lead as { lead: LaneTip[] }).lead.slice(1)) t.taken?.tell({ landed: published });
      t2.settle(true);
      const [f3, f4] = await Promise.all(
        following.map(async (p, i) => {
          const turn = await p;
          if (typeof turn !== 'object' || !('taken' in turn)) throw new Error(`tip ${3 + i} was not taken: ${String(turn)}`);
          const fate = await turn.taken;
          [t3, t4][i]?.settle(true);
          return fate;
        }),
      );
      expect(f3).toEqual({ landed: published });
      expect(f4).toEqual({ landed: published });
      // t5, ready only now, leads the next batch on its own: the tip below it landed.
      expect(versions(await lanes.ready(t5.tip))).toEqual([5]);
      t5.settle(true);
      expect(lanes.active).toBe(0);
    });

    it('a tip whose tip below did not land, and was not taken, is behind', async () => {
      const lanes = new PublicationLanes();
      const [t2, t3] = (await chain(lanes, 2)) as [HandedTip, HandedTip];
      const behind = lanes.ready(t3.tip);
      t2.settle(false);
      await expect(behind).resolves.toBe('behind');
      t3.settle(false);
    });

    it('stops at the first tip not ready: the tips after it wait for their own turn', async () => {
      const lanes = new PublicationLanes();
      const [t2, t3, t4] = (await chain(lanes, 3)) as [HandedTip, HandedTip, HandedTip];
      const t4ready = lanes.ready(t4.tip);
      expect(versions(await lanes.ready(t2.tip))).toEqual([2]);
      t2.settle(true);
      // t3 leads once ready, and takes t4, ready before it.
      expect(versions(await lanes.ready(t3.tip))).toEqual([3, 4]);
      t3.settle(true);
      const t4turn = await t4ready;
      expect(typeof t4turn === 'object' && 'taken' in t4turn).toBe(true);
      t4.settle(true);
    });

    it('takes at most MAX_BATCH_VERSIONS tips into one batch', async () => {
      const lanes = new PublicationLanes();
      const tips = await chain(lanes, MAX_BATCH_VERSIONS + 3);
      for (const t of tips.slice(1)) void lanes.ready(t.tip);
      const lead = await lanes.ready((tips[0] as HandedTip).tip);
      expect(versions(lead)).toHaveLength(MAX_BATCH_VERSIONS);
      for (const t of tips) t.settle(false);
    });
  });

  describe('holds', () => {
    it('start once the turns before end and their tip settles, then keep every other turn out until the work ends', async () => {
      const lanes = new PublicationLanes();
      const order: string[] = [];
      const t1 = await lanes.enter('main');
      const { settle } = t1.handOn({ snapshot: snap(2), speculable: true, appended: Promise.resolve() });
      let inside!: () => void;
      const done = new Promise<void>((r) => (inside = r));
      const held = lanes.hold('main', async () => {
        order.push('hold');
        // A turn the held work enters goes ahead of those waiting behind the hold.
        const own = await lanes.enter('main');
        order.push('own turn');
        own.release();
        await done;
        order.push('hold ends');
      });
      await tick();
      expect(order).toEqual([]);
      settle(true);
      await tick();
      expect(order).toEqual(['hold', 'own turn']);
      const outside = lanes.enter('main').then((t) => {
        order.push('outside');
        t.release();
      });
      const otherBranch = await lanes.enter('dev');
      otherBranch.release();
      await tick();
      expect(order).toEqual(['hold', 'own turn']);
      inside();
      await held;
      await outside;
      expect(order).toEqual(['hold', 'own turn', 'hold ends', 'outside']);
      expect(lanes.active).toBe(0);
    });

    it('end on failure as on success, and work nested in a hold on the same branch runs as part of it', async () => {
      const lanes = new PublicationLanes();
      await expect(lanes.hold('main', () => lanes.hold('main', async () => Promise.reject(new Error('refused'))))).rejects.toThrow(
        'refused',
      );
      const t = await lanes.enter('main');
      t.release();
      expect(lanes.active).toBe(0);
    });
  });
});
