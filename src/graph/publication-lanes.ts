/**
 * Publication lanes: the publications one process makes on one branch,
 * planned one at a time and landed in order, each planned on the manifest
 * the one before it built instead of on the stored head.
 *
 * Without a lane, N concurrent merges into one branch each read the head,
 * plan, and race for version N+1: one wins, the others plan again, and
 * under steady load some run out of attempts (`publish_contention`). With
 * a lane, callers take a FIFO *turn*: only the turn's holder plans. When it
 * has built its manifest it hands it to the lane as the *tip* and gives up
 * the turn, so the next caller plans on that manifest (version N+2 on top
 * of N+1) while the first one's commit index, event and manifest are still
 * being written. A tip's manifest is published only after the one below
 * it landed; if that one did not land, the tip is not published and its
 * caller plans again on the stored head. So the stored lineage never has a
 * version whose parent is not the version below it, and what each caller
 * is told is exactly what landed.
 *
 * A tip is *speculable* only when its branch has no WAL shards (its
 * manifest has no watermarks for its lineage): then the tip's snapshot has
 * no pending generations by construction, exactly as a head read would
 * find it. A branch that ingests serialises its planners without
 * speculating: each waits for the tip to settle and reads the head.
 *
 * Once a lane falls idle, its last landed speculable tip is kept as the
 * branch's *last known head*: the next publication from this process may
 * plan on it while it reads the stored head beside the plan, and publishes
 * only if the two agree (publisher.ts), so a steady writer does not wait a
 * round trip for a head it already knows.
 *
 * Batches. Tips that are ready to land (their commit, event and parts
 * written) while the one below them is still landing do not each wait a
 * round trip for the one below: the first of them whose tip below landed
 * *leads*, taking every ready tip planned on it, in order, into one batch
 * (at most MAX_BATCH_VERSIONS), which the publication loop publishes as one
 * object (head-versions.ts `publishBatch`): the batch lands whole or not
 * at all, and each tip in it is still its own version and commit. A tip
 * taken into a batch learns the batch's fate from its leader.
 *
 * Holds. Work that reads a head and must publish on that very head (a
 * merge request's round: it previews, checks and merges the head it read)
 * never gets there while a steady writer in this process publishes in
 * between. `hold` runs such work once every turn entered before it has
 * ended and its tip settled, and makes turns entered by any other work
 * wait until it ends; turns the work itself enters (in its async context)
 * go ahead as usual. Other processes are not held: a head they move is
 * planned again on, as always.
 *
 * This file only keeps turns, tips and holds; the publication loop
 * (publisher.ts) decides what to do with them. No I/O.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { BranchgraphError } from '../model/errors.js';
import { MAX_BATCH_VERSIONS, type Manifest } from './manifest.js';
import type { Snapshot } from './snapshot.js';

/**
 * What became of a batch, as its leader tells the tips it took: landed (with the tip's manifest as
 * published, naming its batch), lost to a racing publication (nothing of it landed), or unknown (the
 * leader's publication failed and may have landed: `error`).
 */
export type BatchFate = { landed: Manifest } | 'lost' | { error: unknown };

/** What a tip ready to land does next: lead a batch (itself first), follow one that took it, or plan again. */
export type LandingTurn = { lead: LaneTip[] } | { taken: Promise<BatchFate> } | 'behind';

/** A manifest handed on by the turn that built it: pending until its publication settles. */
export interface LaneTip {
  snapshot: Snapshot;
  /**
   * Settles once the tip's event is appended. A successor appends its own after it, so its
   * event's sequence number is higher: within a branch, event order stays commit order.
   */
  appended: Promise<unknown>;
  /** True once the manifest landed; false when it did not (lost a race, failed, was refused). */
  landed: Promise<boolean>;
  state: 'pending' | 'landed' | 'lost';
  /** Whether a successor may plan on it before it lands (see the header). */
  speculable: boolean;
  /** The tip this one was planned on, while that one had not landed. */
  below?: LaneTip | undefined;
  /** The tip planned on this one before it landed, if any. */
  next?: LaneTip;
  /** Set once its writes are done and it waits to land (see `ready`). */
  ready?: boolean;
  /** Set when a batch led by a tip below took this one: the batch's fate. */
  taken?: { fate: Promise<BatchFate>; tell: (fate: BatchFate) => void };
}

/** One caller's turn to plan on a branch. */
export interface LaneTurn {
  /** The newest manifest this process handed on for the branch, if it is not known to have failed. */
  readonly tip: LaneTip | undefined;
  /**
   * Hand on what this turn built and end the turn. `settle` must be called once with whether
   * the manifest landed; successors planned on it wait for that.
   */
  handOn(tip: Pick<LaneTip, 'snapshot' | 'speculable' | 'appended' | 'below'>): HandedTip;
  /** End the turn without handing anything on (idempotent). */
  release(): void;
}

/** A tip handed on, as the turn that built it holds it. */
export interface HandedTip {
  tip: LaneTip;
  /** Whether the tip's manifest landed; the first answer holds. */
  settle: (landed: boolean) => void;
}

interface Lane {
  /** Resolves when the last queued turn ends. */
  queue: Promise<void>;
  tip: LaneTip | undefined;
  /** Turns queued or held; the lane is forgotten when none is and its tip has settled. */
  holders: number;
  /** A hold on the lane (see the header): its work's turns queue here, apart from the lane's. */
  hold?: { token: object; queue: Promise<void> } | undefined;
}

/** Branches whose last known head is kept, most recently published last. */
const KNOWN_HEADS = 1024;

export class PublicationLanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly knownHeads = new Map<string, Snapshot>();
  /** The holds the running work is inside of (its async context's). */
  private readonly holding = new AsyncLocalStorage<ReadonlySet<object>>();

  /** The head this process last published on `branch` when its lane fell idle (see the header), if kept. */
  lastKnownHead(branch: string): Snapshot | undefined {
    return this.knownHeads.get(branch);
  }

  /**
   * Run `work` with `branch` held for it (see the header): it keeps a turn of the lane for as long as
   * it runs, after the tip left by the turns before it settled; turns it enters itself queue apart.
   */
  async hold<T>(branch: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.inside(this.lanes.get(branch)?.hold)) return await work();
    const turn = await this.enter(branch, signal);
    const lane = this.laneOf(branch);
    try {
      const tip = turn.tip;
      if (tip?.state === 'pending') await tip.landed;
      const token = {};
      lane.hold = { token, queue: Promise.resolve() };
      return await this.holding.run(new Set([...(this.holding.getStore() ?? []), token]), work);
    } finally {
      lane.hold = undefined;
      turn.release();
    }
  }

  /** Whether the running work is inside `hold`. */
  private inside(hold: Lane['hold']): hold is NonNullable<Lane['hold']> {
    return hold !== undefined && this.holding.getStore()?.has(hold.token) === true;
  }

  private laneOf(branch: string): Lane {
    const lane = this.lanes.get(branch) ?? { queue: Promise.resolve(), tip: undefined, holders: 0 };
    this.lanes.set(branch, lane);
    return lane;
  }

  /** Wait for this process's turn to plan on `branch` (FIFO). Aborting while waiting gives the place up. */
  async enter(branch: string, signal?: AbortSignal): Promise<LaneTurn> {
    const lane = this.laneOf(branch);
    // The work a hold runs queues apart from the turns waiting behind the hold.
    const held = this.inside(lane.hold) ? lane.hold : undefined;
    const before = held?.queue ?? lane.queue;
    let end!: () => void;
    const mine = new Promise<void>((resolve) => {
      end = resolve;
    });
    if (held !== undefined) held.queue = before.then(() => mine);
    else lane.queue = before.then(() => mine);
    lane.holders++;
    let ended = false;
    const release = (): void => {
      if (ended) return;
      ended = true;
      lane.holders--;
      end();
      this.forgetIfIdle(branch, lane);
    };
    try {
      await abortable(before, signal);
    } catch (e) {
      release();
      throw e;
    }
    return {
      get tip() {
        return lane.tip?.state === 'lost' ? undefined : lane.tip;
      },
      handOn: (handed) => {
        let settle!: (landed: boolean) => void;
        const tip: LaneTip = {
          ...handed,
          state: 'pending',
          landed: new Promise<boolean>((resolve) => {
            settle = resolve;
          }),
        };
        if (tip.below !== undefined) tip.below.next = tip;
        lane.tip = tip;
        release();
        let settled = false;
        return {
          tip,
          settle: (landed: boolean) => {
            if (settled) return;
            settled = true;
            tip.state = landed ? 'landed' : 'lost';
            // Settled tips are not batched again, and the chain must not keep old manifests alive.
            delete tip.below;
            delete tip.next;
            settle(landed);
            this.forgetIfIdle(branch, lane);
          },
        };
      },
      release,
    };
  }

  /**
   * `tip` is ready to land (everything its manifest names is written): once the tip below it has
   * landed, it leads a batch of itself and the ready tips planned on it (see the header); if a batch
   * led below took it meanwhile, it follows that batch; if the tip below did not land, it is behind.
   */
  async ready(tip: LaneTip): Promise<LandingTurn> {
    tip.ready = true;
    const below = tip.below === undefined ? true : await tip.below.landed;
    if (tip.taken !== undefined) return { taken: tip.taken.fate };
    if (!below) return 'behind';
    const lead = [tip];
    for (let n = tip.next; n?.ready === true && n.taken === undefined && lead.length < MAX_BATCH_VERSIONS; n = n.next) {
      let tell!: (fate: BatchFate) => void;
      const fate = new Promise<BatchFate>((resolve) => {
        tell = resolve;
      });
      n.taken = { fate, tell };
      lead.push(n);
    }
    return { lead };
  }

  /** Branches with a turn queued or held, or a tip not yet settled (for tests and gauges). */
  get active(): number {
    return this.lanes.size;
  }

  private forgetIfIdle(branch: string, lane: Lane): void {
    if (lane.holders === 0 && lane.tip?.state !== 'pending' && this.lanes.get(branch) === lane) {
      this.lanes.delete(branch);
      this.knownHeads.delete(branch);
      if (lane.tip?.state === 'landed' && lane.tip.speculable) {
        this.knownHeads.set(branch, lane.tip.snapshot);
        const oldest = this.knownHeads.keys().next().value;
        if (this.knownHeads.size > KNOWN_HEADS && oldest !== undefined) this.knownHeads.delete(oldest);
      }
    }
  }
}

function abortable(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.reject(new BranchgraphError('aborted', 'aborted while waiting to publish'));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new BranchgraphError('aborted', 'aborted while waiting to publish'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
