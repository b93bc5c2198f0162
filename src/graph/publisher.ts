/**
 * The one publication loop. Every change (a write batch, a schema change,
 * a merge, a catch-up batch, a compaction) is a plan for it:
 *
 * 1. read the branch head (or take the one the caller just read);
 * 2. refuse with `head_moved` when the caller expected another head;
 * 3. run the plan against the head; `unchanged` publishes nothing;
 * 4. fold the pending WAL generations the plan saw into real runs beneath
 *    the plan's own, and maintain the secondary indexes;
 * 5. build the next manifest; write the commit index entry, the manifest's
 *    parts and the event, while the runs it names finish being stored and,
 *    planned on the head this process last published, while the stored
 *    head is read to confirm it; refuse one planned too long ago (GC's
 *    grace is measured against that deadline); then publish the manifest
 *    create-only;
 * 6. on a lost race, delete the attempt's scratch runs and plan again
 *    against the new head, with jittered backoff, a bounded number of
 *    times. A lost response is looked up before anything is decided, so a
 *    publication that landed is never repeated or its runs deleted.
 *
 * The plan given is never changed: folding builds a new plan.
 */
import { BranchgraphError, isBranchgraphError, throwIfAborted } from '../model/errors.js';
import { findType, schemaHashOf, schemaTextOf, type Schema } from '../model/schema.js';
import { findInputProblem } from '../model/text.js';
import { withChanges } from '../model/part-tree.js';
import { abortableSleep } from '../store/abortable-sleep.js';
import type { ObjectStore } from '../store/object-store.js';
import type { RunRef } from '../table/run.js';
import type { TableVersion } from '../table/table-version.js';
import type { IndexedVersion } from '../table/secondary-index.js';
import { NO_PENDING, watermarksFor } from '../pending/pending-wal.js';
import { foldedEntries, isPendingRun } from '../pending/generation.js';
import { commitRefOf, namedRuns, refOf, sameRef, type Manifest, type ManifestRef, type TableEntry } from './manifest.js';
import { contentCommitOf } from './head-state.js';
import { newId } from '../model/new-id.js';
import { Ancestry } from './ancestry.js';
import { keys } from './keys.js';
import { maintainIndexes } from './index-maintenance.js';
import { stampOrigins } from './run-origin.js';
import { guardedChangeOf, protectionVerdict, type ProtectionPass } from '../model/branch-protection.js';
import { MAX_PUBLICATION_MS } from './gc.js';
import { IdempotencyRecords } from './idempotency.js';
import type { BranchRecord } from './branch-record.js';
import type { Repository } from './repository.js';
import type { RunStore } from './run-store.js';
import type { BranchHints } from './branch-hints.js';
import type { FoldRequest, Heads, Publication } from './ports.js';
import { sameHead, shownTables, type Snapshot } from './snapshot.js';
import type { BatchFate, HandedTip, LaneTip, LaneTurn, PublicationLanes } from './publication-lanes.js';
import {
  MAX_PUBLISH_ATTEMPTS,
  type ChangeOptions,
  type ChangePlan,
  type ChangeResult,
  type Plan,
  type PlanResult,
  type PublishedChange,
  type PublishOptions,
} from './change.js';

/** The largest schema (canonical JSON bytes) a manifest carries inline; larger ones only by hash. */
export const MAX_INLINE_SCHEMA_BYTES = 4096;

/** What the loop publishes with: the repository, the runs and store (scratch and folded generations), head reads, hints, the clock and the default actor. */
export interface PublisherParts {
  repo: Repository;
  runs: RunStore;
  store: ObjectStore;
  heads: Heads;
  hints: BranchHints;
  clock: () => number;
  /** Floats in [0, 1) for the backoff's jitter: a simulation passes a seeded source so racing publishers replay exactly. */
  random: () => number;
  actor: string;
  /** This process's publication lanes, shared by every view of the graph. */
  lanes: PublicationLanes;
  /** New commit ids, increasing within a millisecond (graph-parts.ts). */
  commitIds: (time: number) => string;
}

/** One attempt's published manifest and what to tidy after it. */
interface Landed<T> {
  /** The event appended for it (graph/event-log.ts); none for a re-laid version. */
  event: number | undefined;
  manifest: Manifest;
  rec: BranchRecord;
  plan: ChangePlan<T>;
  attempt: number;
  folded: string[];
}

export class Publisher implements Publication {
  constructor(private readonly parts: PublisherParts) {}

  /** Learn what a publication needs before its plan (ports.ts): where the event log ends, in a cold process. */
  warm(): void {
    this.parts.repo.events.warm();
  }

  /**
   * Plan a change against the branch head and publish it as the next
   * version; see the file header for the steps.
   */
  async commitChange<T>(branch: string, opts: PublishOptions, plan: Plan<T>): Promise<ChangeResult<T>> {
    // Commit metadata is stored text too: embedded callers get the same refusal transports give.
    const bad = findInputProblem({ actor: opts.actor, author: opts.author, message: opts.message }, 'commit');
    if (bad !== undefined) throw new BranchgraphError('invalid_input', `${bad.path}: ${bad.message}`, { issues: [bad] });
    // A cold process learns where the event log ends while the change is planned, not after.
    this.warm();
    // Only races lost at the store count: planning again because the manifest below ours in this
    // process's lane did not land is not contention of ours (publication-lanes.ts).
    let lost = 0;
    for (let tries = 1; lost < MAX_PUBLISH_ATTEMPTS && tries <= MAX_PUBLISH_ATTEMPTS * 4; tries++) {
      throwIfAborted(opts.signal);
      // Jittered backoff after a lost race, so racing publishers spread out instead of colliding again.
      if (lost > 0) await abortableSleep(this.parts.random() * 2 ** (lost + 1) * 2, opts.signal);
      const turn = opts.chained === true ? await this.parts.lanes.enter(branch, opts.signal) : undefined;
      try {
        const outcome = await this.tryOnce({ branch, opts, plan, turn, fresh: tries > 1, attempt: tries });
        if (outcome === 'lost') lost++;
        else if (outcome !== 'behind') return outcome;
      } finally {
        turn?.release();
      }
    }
    throw new BranchgraphError('publish_contention', `branch ${branch} moved ${MAX_PUBLISH_ATTEMPTS} times while publishing; retry`, {
      details: { branch, attempts: MAX_PUBLISH_ATTEMPTS },
    });
  }

  /**
   * Plan once and try to publish: the change (published or unchanged), `lost` to a racing
   * publication, or `behind` when it was planned on a lane tip that did not land.
   */
  private async tryOnce<T>(a: {
    branch: string;
    opts: PublishOptions;
    plan: Plan<T>;
    turn: LaneTurn | undefined;
    fresh: boolean;
    attempt: number;
  }): Promise<ChangeResult<T> | 'lost' | 'behind'> {
    const { branch, opts, turn } = a;
    const { head: planned, below, check } = await this.headFor(a);
    checkExpectedHead(branch, planned, opts.expectedHead);
    // Whether the head planned on is the head: the manifest below landed, and a last known head
    // is what the stored head read beside the plan says (then that read's record and time count).
    const confirmed = async (): Promise<Snapshot | undefined> => {
      if (below !== undefined && !(await below.landed)) return undefined;
      if (check === undefined) return planned;
      const stored = await check.catch(() => undefined);
      return stored !== undefined && sameHead(stored, planned) ? { ...planned, branch: stored.branch, readAt: stored.readAt } : undefined;
    };
    let proposed: PlanResult<T>;
    try {
      proposed = await a.plan(planned, a.attempt);
    } catch (e) {
      // Planned on a manifest that never landed: the refusal may be about a state that never was.
      if ((await confirmed()) === undefined) return 'behind';
      throw e;
    }
    if ('unchanged' in proposed) {
      // "Nothing to do" (up to date, conflicts) holds only if the manifest it was judged against landed.
      turn?.release();
      const head = await confirmed();
      if (head === undefined) return 'behind';
      return { status: 'unchanged', result: proposed.unchanged, head };
    }
    // Planned on a lane tip, the attempt writes beside the tip's landing and publishes only after it;
    // planned on the head this process last published, it writes beside the stored head's read and
    // publishes only once that read confirms it (attempt). Waiting here would cost a round trip.
    const confirm = below === undefined && check !== undefined ? confirmed : undefined;
    const head = below !== undefined || confirm !== undefined ? planned : await confirmed();
    try {
      if (head === undefined) {
        await this.parts.runs.delete(proposed.scratch).catch(() => undefined);
        return 'behind';
      }
      protectionMarks(head.branch, proposed.kind, opts.protection);
    } catch (e) {
      await this.parts.runs.delete(proposed.scratch).catch(() => undefined);
      // Refused on the branch record as last published: the record read beside the plan decides.
      if (confirm !== undefined && (await confirm()) === undefined) return 'behind';
      throw e;
    }
    return this.attempt({ branch, head, proposed, attempt: a.attempt, opts, turn, below, confirm });
  }

  /**
   * The head to plan on: the lane's tip when this process built one that may be planned on
   * (`below` is then its landing), else the head the caller gave for a first try, else the
   * stored head. A caller that expects a head never plans on a tip: it waits for it to settle.
   */
  private async headFor(a: {
    branch: string;
    opts: PublishOptions;
    turn: LaneTurn | undefined;
    fresh: boolean;
  }): Promise<{ head: Snapshot; below?: LaneTip; check?: Promise<Snapshot | undefined> }> {
    const { branch, opts, turn } = a;
    const tip = turn?.tip;
    // A caller that expects a head, or plans on stored heads only, waits for a pending tip to settle.
    const stored = opts.expectedHead !== undefined || opts.storedHeadsOnly === true;
    if (tip !== undefined && tip.state === 'pending') {
      if (tip.speculable && !stored) return { head: tip.snapshot, below: tip };
      await tip.landed;
    }
    const read = () => this.parts.heads.branchHead(branch, opts.signal, { withoutPending: opts.withoutPending === true });
    const landedTip = turn?.tip;
    // A tip that landed is the head as this process last published it, newer than one the caller
    // read before: planned on as it is when it holds no pending rows, else read again with them.
    // After a lost race, only the store knows the head.
    if (!a.fresh && landedTip?.state === 'landed' && newer(landedTip.snapshot, opts.firstHead))
      return { head: landedTip.speculable ? landedTip.snapshot : await read() };
    // A first head a branch hint named is planned on while the head read that confirms it goes on.
    if (!a.fresh && opts.firstHead !== undefined)
      return { head: opts.firstHead, ...(opts.firstHeadCheck !== undefined ? { check: opts.firstHeadCheck } : {}) };
    // The head this process last published, planned on while the stored head is read beside the
    // plan; the publication goes ahead only if they agree. A caller expecting a head reads it first.
    const known = turn === undefined || a.fresh || stored ? undefined : this.parts.lanes.lastKnownHead(branch);
    if (known !== undefined && opts.withoutPending !== true) {
      const check = read();
      check.catch(() => undefined);
      return { head: known, check };
    }
    return { head: await read() };
  }

  /**
   * One attempt at publishing `proposed` on `head`: published, `lost` to a racing publication, or
   * `behind` when `head` was a lane tip that did not land, or a head `confirm` did not confirm
   * (scratch deleted either way). In a lane, the built manifest is handed on before anything is
   * written, so the next caller plans on it while this one writes; it is published only once
   * `below` (the tip it was planned on) landed, and once `confirm` found `head` still the head.
   */
  private async attempt<T>(a: {
    branch: string;
    head: Snapshot;
    proposed: ChangePlan<T>;
    attempt: number;
    opts: PublishOptions;
    turn: LaneTurn | undefined;
    below: LaneTip | undefined;
    /** The stored head, read beside the plan: `head` as it is now, or undefined when it moved. */
    confirm: (() => Promise<Snapshot | undefined>) | undefined;
  }): Promise<PublishedChange<T> | 'lost' | 'behind'> {
    const { head, opts } = a;
    const rec = head.branch as BranchRecord;
    // What is written grows as pending generations are folded; the plan given stays as it was.
    let planned: ChangePlan<T> = {
      ...a.proposed,
      wal: a.proposed.wal ?? watermarksFor(head.manifest, rec.lineage),
      scratch: [...a.proposed.scratch],
    };
    // Scratch may be deleted only when the manifest certainly did not land.
    let maybePublished = false;
    let handed: HandedTip | undefined;
    let appendedSeq: Promise<number | undefined> | undefined;
    try {
      throwIfAborted(opts.signal);
      const fold = await this.foldPending(head, planned, opts.signal);
      planned = await maintainIndexes({ runs: this.parts.runs, head, plan: fold.plan, signal: opts.signal });
      const manifest = await this.buildManifest({ head, rec, plan: planned, opts });
      const { commit } = manifest;
      // A re-laid version adds no commit: no commit index entry, no event (the commit has both).
      const relaid = manifest.layout !== undefined;
      const writes = this.writeBeforeManifest({ branch: a.branch, head, manifest, plan: planned, below: a.below, signal: opts.signal });
      appendedSeq = writes.appended.catch(() => undefined);
      handed = a.turn?.handOn({
        snapshot: this.tipOf({ manifest, rec, plan: planned, head }),
        speculable: Object.keys(watermarksFor(manifest, rec.lineage)).length === 0,
        // A re-laid version has no event: the next tip's must come after the one below this.
        appended: writes.appended.then((seq) => seq ?? a.below?.appended).catch(() => undefined),
        below: a.below,
      });
      const [, , seq] = await writes.all;
      const landed = { manifest, rec, plan: planned, attempt: a.attempt, folded: fold.deletable, event: seq };
      // Certainly not published: its commit index entry goes (its runs go in `finally`).
      const forgotten = async <O extends 'behind' | 'lost'>(outcome: O): Promise<O> => {
        if (!relaid) await this.parts.store.deleteMany([keys.commit(commit.id)]).catch(() => undefined);
        return outcome;
      };
      const confirm = a.confirm ?? (async () => head);
      if (!(await this.confirmedStill({ branch: a.branch, confirm, readAt: planned.readAt }, () => forgotten('behind')))) return 'behind';
      const turn = handed === undefined ? ({ lead: [] } as const) : await this.parts.lanes.ready(handed.tip);
      if (turn === 'behind') return forgotten('behind');
      if ('taken' in turn) {
        // A batch led by a tip below took this one: its fate is ours, and a lost race is its leader's.
        const fate = await turn.taken;
        if (fate === 'lost') return forgotten('behind');
        maybePublished = true;
        if ('error' in fate) throw fate.error;
        handed?.settle(true);
        return this.published({ ...landed, manifest: fate.landed });
      }
      maybePublished = true;
      const outcome = await this.land({ landed, head, signal: opts.signal, handed, batch: turn.lead.slice(1) });
      if (outcome !== 'lost') return outcome;
      maybePublished = false;
      return forgotten('lost');
    } finally {
      handed?.settle(false);
      if (!maybePublished) await this.givenUp(planned.scratch, appendedSeq);
    }
  }

  /**
   * Whether `confirm` finds the head planned on still the head, soon enough after the plan's reads
   * to publish on (checkDeadline: checked once the attempt's writes are out, as nothing is published
   * before it); when not, `forget` undoes what the attempt wrote.
   */
  private async confirmedStill(
    a: { branch: string; confirm: () => Promise<Snapshot | undefined>; readAt: number | undefined },
    forget: () => Promise<unknown>,
  ): Promise<boolean> {
    try {
      const stored = await a.confirm();
      if (stored !== undefined) {
        this.checkDeadline(a.branch, Math.min(stored.readAt ?? Infinity, a.readAt ?? Infinity));
        return true;
      }
    } catch (e) {
      await forget();
      throw e;
    }
    await forget();
    return false;
  }

  /**
   * What must land before `manifest` (none depends on another): its commit index entry, its parts
   * and the runs it names, its event, and a keyed merge's started mark. `appended` is the event's sequence number.
   */
  private writeBeforeManifest(a: {
    branch: string;
    head: Snapshot;
    manifest: Manifest;
    plan: ChangePlan<unknown>;
    below: LaneTip | undefined;
    signal: AbortSignal | undefined;
  }): { all: Promise<[unknown, unknown, number | undefined, unknown]>; appended: Promise<number | undefined> } {
    const { repo, store } = this.parts;
    const { manifest, plan, signal } = a;
    const appended = this.announce({ branch: a.branch, manifest, below: a.below, signal });
    const all = Promise.all([
      manifest.layout !== undefined ? undefined : repo.commits.write(manifest.commit.id, refOf(manifest), signal),
      // The runs it names that are still being stored (run-store.ts): written beside the commit, not before it.
      Promise.all([repo.manifests.writeParts(manifest, signal, a.head.manifest), this.parts.runs.stored(namedRuns(manifest.tables))]),
      appended,
      // A keyed merge marks its key started before its commit can land, and only then: a request
      // refused before publishing leaves nothing behind (idempotency.ts).
      plan.idempotency === undefined ? undefined : new IdempotencyRecords(store, this.parts.clock).start(plan.idempotency.keyHash, signal),
    ]);
    return { all, appended };
  }

  /**
   * Publish the landed attempt's manifest over `head`'s, with the manifests of the lane tips it
   * leads in a batch (publication-lanes.ts): published, or `lost` to a racing publication. A lost
   * response is looked into before anything is decided: the batch may have landed. A store that
   * answers not_found to a publication says the graph itself is gone, and whatever landed is
   * nobody's. Each tip in the batch is told the batch's fate.
   */
  private async land<T>(a: {
    landed: Landed<T>;
    head: Snapshot;
    signal: AbortSignal | undefined;
    handed: HandedTip | undefined;
    batch: readonly LaneTip[];
  }): Promise<PublishedChange<T> | 'lost'> {
    const { repo } = this.parts;
    const { batch } = a;
    const first = a.landed.manifest;
    const all = [first, ...batch.map((t) => t.snapshot.manifest)];
    const last = all[all.length - 1] as Manifest;
    const ms = batch.length === 0 ? all : all.map((m) => ({ ...m, batch: { first: first.version, last: last.version } }));
    const tell = (fate: (i: number) => BatchFate): void => {
      for (const [i, t] of batch.entries()) t.taken?.tell(fate(i + 1));
    };
    let outcome: 'published' | 'lost';
    try {
      // The event's writer must still hold its lease when the manifest lands, or a reader could pass the event first.
      if (ms.some((m) => m.layout === undefined)) await repo.events.beforeSource(a.signal);
    } catch (e) {
      tell(() => 'lost');
      throw e;
    }
    try {
      // A batch carries other callers' commits: one caller giving up must not leave theirs unknown.
      outcome = await repo.versions.publishBatch(ms, batch.length === 0 ? a.signal : undefined, a.head.manifest);
    } catch (e) {
      if (!isBranchgraphError(e, 'not_found') && (await repo.versions.isPublished(ms[0] as Manifest))) outcome = 'published';
      else {
        tell(() => ({ error: e }));
        throw e;
      }
    }
    tell((i) => (outcome === 'published' ? { landed: ms[i] as Manifest } : 'lost'));
    a.handed?.settle(outcome === 'published');
    return outcome === 'published' ? this.published({ ...a.landed, manifest: ms[0] as Manifest }) : 'lost';
  }

  /**
   * The commit event of `manifest` (none for a re-laid version), appended at once, beside the lane
   * tip's below it: this process takes sequence numbers in the order it asks (event-log.ts), so
   * ours comes after that tip's in the log as our commit does. If another process's append took
   * the tip's number meanwhile, the tip's event lands after ours: ours is void then, and appended
   * again after it. The event names the manifest it is for: if the attempt loses, that manifest
   * says another commit, and readers skip the event.
   */
  private async announce(a: { branch: string; manifest: Manifest; below: LaneTip | undefined; signal?: AbortSignal | undefined }) {
    const { commit, layout } = a.manifest;
    if (layout !== undefined) return undefined;
    const { events } = this.parts.repo;
    const source = { key: keys.manifest(a.manifest.lineage, a.manifest.version), commit: commit.id };
    const event = { kind: 'commit' as const, actor: commit.actor, branch: a.branch, commit: commit.id, commitKind: commit.kind, source };
    const seq = await events.append(event, a.signal);
    const under = await a.below?.appended;
    if (typeof under !== 'number' || seq > under) return seq;
    void events.abandon(seq);
    return events.append(event, a.signal);
  }

  /**
   * An attempt whose manifest was certainly not written: its scratch runs go, and, as its commit id
   * is never used again, its event is void now rather than holding every reader of the feed until
   * the deadline (event-log.ts).
   */
  private async givenUp(scratch: readonly RunRef[], event: Promise<number | undefined> | undefined): Promise<void> {
    await this.parts.runs.delete(scratch).catch(() => undefined);
    const seq = await event;
    if (seq !== undefined) void this.parts.repo.events.abandon(seq);
  }

  /** What a lane's next caller plans on: the manifest just built, read as a head read would read it. */
  private tipOf(a: { manifest: Manifest; rec: BranchRecord; plan: ChangePlan<unknown>; head: Snapshot }): Snapshot {
    const { manifest, rec, plan, head } = a;
    const schema = plan.schema ?? head.schema;
    const tables = shownTables(manifest, schema, NO_PENDING);
    // Read now, as far as GC's deadline is concerned: a successor publishes only after this manifest
    // landed, so what it takes from here is published by then; its own reads are dated by its plan.
    return { ref: refOf(manifest), manifest, schema, tables, pending: NO_PENDING, branch: rec, readAt: this.parts.clock() };
  }

  /**
   * Publish exactly `head`'s pending generations on its branch and return
   * the snapshot that holds them (no pending part), or `head` itself when
   * nothing is pending. Used when a merge or a new branch takes a branch's
   * rows elsewhere: the manifest recorded as the merged parent or fork point
   * must hold every row taken and no other, or a later merge base would be
   * wrong. If the branch moved since `head`, the caller's plan is stale:
   * `publish_contention`, which callers retry.
   */
  async foldExactly(request: FoldRequest): Promise<Snapshot> {
    const { branch, head, message, ...opts } = request;
    if (head.pending.generations.length === 0) return head;
    // A head whose pending rows were only listed holds none of them: the fold reads its own, so it
    // never publishes a catch-up that marks rows folded without carrying them.
    const firstHead = head.pending.listed === true ? {} : { firstHead: head };
    const folded = await this.commitChange<null>(branch, { ...opts, ...firstHead, expectedHead: undefined }, async (h) => {
      if (!sameRef(h.ref, head.ref) || h.pending.generations.length !== head.pending.generations.length) {
        throw new BranchgraphError('publish_contention', `branch ${branch} changed while its rows were being taken; retry`, {
          details: { branch },
        });
      }
      return { kind: 'catchup', scratch: [], result: null, message };
    });
    if (folded.status === 'unchanged') return folded.head;
    return this.parts.heads.snapshotAt(refOf(folded.manifest), {
      signal: opts.signal,
      ...(head.branch !== undefined ? { branch: head.branch } : {}),
    });
  }

  /** Publish what is pending on the branch when the fold lands, planning again on every race (ports.ts). */
  async foldPendingNow(request: Omit<FoldRequest, 'head'>): Promise<Snapshot> {
    const { branch, message, ...opts } = request;
    const folded = await this.commitChange<null>(branch, { ...opts, expectedHead: undefined }, async (h) =>
      h.pending.generations.length === 0 ? { unchanged: null } : { kind: 'catchup', scratch: [], result: null, message },
    );
    if (folded.status === 'unchanged') return folded.head;
    return this.parts.heads.snapshotAt(refOf(folded.manifest), { signal: opts.signal });
  }

  /**
   * GC deletes unreferenced objects older than its grace, which is never
   * below MIN_GC_GRACE_MS. A publication whose snapshots were read longer
   * than MAX_PUBLICATION_MS ago could name runs GC has since judged
   * garbage (its own scratch, or runs of a branch deleted meanwhile), so it
   * does not publish: the attempt's scratch is deleted and the caller gets
   * a retryable error. The margin between the two covers clock skew
   * between replicas.
   */
  private checkDeadline(branch: string, readAt: number): void {
    const age = this.parts.clock() - readAt;
    if (age <= MAX_PUBLICATION_MS) return;
    const limit = MAX_PUBLICATION_MS / 1000;
    throw new BranchgraphError(
      'publish_contention',
      `the change to ${branch} was planned ${Math.round(age / 1000)} s ago, longer than a publication may take (${limit} s); retry`,
      {
        details: { branch, ageMs: age },
      },
    );
  }

  private async published<T>(l: Landed<T>): Promise<PublishedChange<T>> {
    // Started now and left to finish: the hint is for other processes' next cold read, not for this change.
    // Folds leave it be: they come in bursts, and a hint one version behind costs a cold reader one
    // round trip, where a write per batch costs the fold an fsync'd file each. A compaction does write
    // it: it is often a branch's last version for a long while (a fork compacted after its writes),
    // and a burst of them writes at most two hints per branch (branch-hints.ts).
    if (l.manifest.commit.kind !== 'catchup') this.parts.hints.write(this.parts.repo, l.rec, l.manifest);
    // Folded generations sit below the new watermarks; removing them is tidying (GC catches what this
    // misses). Their cached copies stay until evicted: a request in flight may still read them.
    if (l.folded.length > 0) await this.parts.store.deleteMany(l.folded).catch(() => undefined);
    if (l.event !== undefined) void this.parts.repo.events.confirm(l.event);
    return { status: 'published', commit: l.manifest.commit, manifest: l.manifest, result: l.plan.result, attempts: l.attempt };
  }

  /**
   * Make the plan's tables hold every pending generation the plan saw, as
   * real runs beneath the plan's own runs, and advance the watermarks past
   * them. Each stretch of consecutive pending runs becomes one run.
   */
  private async foldPending<T>(
    head: Snapshot,
    plan: ChangePlan<T>,
    signal?: AbortSignal,
  ): Promise<{ plan: ChangePlan<T>; deletable: string[] }> {
    const foldHead = head.pending.generations.length > 0 && plan.keepPending !== true;
    // A merge may adopt a source's pending runs even when the target has none.
    const adopts = Object.values(plan.tables ?? {}).some((t) => t?.runs.some(isPendingRun));
    if (!foldHead && !adopts) return { plan, deletable: [] };
    const scratch = [...plan.scratch];
    const tables: Record<string, TableVersion | null> = { ...(foldHead ? head.tables : {}), ...plan.tables };
    await Promise.all(
      Object.entries(tables).map(async ([name, t]) => {
        if (t === null || !t.runs.some(isPendingRun)) return;
        tables[name] = await this.foldStretches({ schema: plan.schema ?? head.schema, name, t, out: { scratch, signal } });
      }),
    );
    if (!foldHead) return { plan: { ...plan, tables, scratch }, deletable: [] };
    return {
      plan: { ...plan, tables, scratch, wal: { ...plan.wal, ...head.pending.seen }, walFolded: foldedEntries(head.pending.generations) },
      deletable: head.pending.generations.map((g) => g.key),
    };
  }

  /** One table with each stretch of consecutive pending runs written as one stored run (null when the schema dropped it). */
  private async foldStretches(a: {
    schema: Schema;
    name: string;
    t: TableVersion;
    out: { scratch: RunRef[]; signal?: AbortSignal | undefined };
  }): Promise<TableVersion | null> {
    const { schema, name, t, out } = a;
    const type = findType(schema, name);
    if (type === undefined) return null;
    const runs: RunRef[] = [];
    let stretch: RunRef[] = [];
    const flush = async (): Promise<void> => {
      if (stretch.length === 0) return;
      const folded = await this.parts.runs.writeNewest(type, stretch, out.signal);
      stretch = [];
      if (folded === undefined) return;
      out.scratch.push(folded.ref);
      runs.push(folded.ref);
    };
    for (const r of t.runs) {
      if (isPendingRun(r)) stretch.push(r);
      else {
        await flush();
        runs.push(r);
      }
    }
    await flush();
    return { runs };
  }

  private async buildManifest(a: { head: Snapshot; rec: BranchRecord; plan: ChangePlan<unknown>; opts: ChangeOptions }): Promise<Manifest> {
    const { head, rec, plan, opts } = a;
    const { repo } = this.parts;
    const prev = head.manifest;
    const version = prev.lineage === rec.lineage ? prev.version + 1 : 1;
    const { tables, changes } = changedTables({ prev, plan, origin: { lineage: rec.lineage, version } });
    // Schemas are content-addressed: an unchanged schema needs no write.
    const schemaHash =
      plan.schema === undefined || schemaHashOf(plan.schema) === prev.schema
        ? prev.schema
        : await repo.schemas.write(plan.schema, opts.signal);
    const second = plan.secondParent;
    const parents = [refOf(prev), ...(second !== undefined ? [refOf(second)] : [])];
    if (second !== undefined && sameRef(parents[0] as ManifestRef, refOf(second))) parents.pop();
    // A change of no row (a compaction, a registration): the version re-lays the head's commit instead of adding one.
    const relaid = plan.relays === true;
    return {
      lineage: rec.lineage,
      version,
      schema: schemaHash,
      // Small schemas ride along, saving a cold reader one round trip; large ones are read once by hash.
      ...inlineSchema(plan.schema ?? head.schema),
      tables,
      tableTree: withChanges(prev.tableTree, changes, repo.trees.tables),
      wal: plan.wal ?? watermarksFor(prev, rec.lineage),
      ...(plan.walFolded !== undefined ? { walFolded: plan.walFolded } : {}),
      commit: relaid ? prev.commit : this.commitOf({ prev, rec, plan, parents, opts }),
      ancestry: Ancestry.next({ lineage: rec.lineage, version }, prev.ancestry, second?.ancestry),
      generation: relaid ? prev.generation : Math.max(prev.generation, second?.generation ?? 0) + 1,
      ...(relaid ? { layout: { of: commitRefOf(prev), id: newId(this.parts.clock()) } } : {}),
    };
  }

  private commitOf(c: {
    prev: Manifest;
    rec: BranchRecord;
    plan: ChangePlan<unknown>;
    parents: ManifestRef[];
    opts: ChangeOptions;
  }): Manifest['commit'] {
    const { plan, opts } = c;
    const actor = opts.actor ?? this.parts.actor;
    const second = plan.secondParent;
    return {
      id: this.parts.commitIds(this.parts.clock()),
      parents: c.parents,
      parentIds: [c.prev.commit.id, ...(second !== undefined && c.parents.length > 1 ? [second.commit.id] : [])],
      branch: c.rec.name,
      actor,
      ...(opts.author !== undefined && opts.author !== actor ? { author: opts.author } : {}),
      message: plan.message ?? opts.message ?? plan.kind,
      time: new Date(this.parts.clock()).toISOString(),
      kind: plan.kind,
      ...(plan.kind === 'catchup' ? { continues: contentCommitOf(c.prev) } : {}),
      ...(plan.group !== undefined ? { group: plan.group } : {}),
      ...(plan.resolved !== undefined ? { resolved: plan.resolved } : {}),
      ...(plan.idempotency !== undefined ? { idempotency: plan.idempotency } : {}),
      ...protectionMarks(c.rec, plan.kind, opts.protection),
    };
  }
}

/**
 * What a change records of how it passed the branch's protection: the merge request a merge
 * landed, or an admin's bypass. Refused with `branch_protected` when the rule forbids it
 * (model/branch-protection.ts); the rule is the branch record's the plan was made against.
 */
function protectionMarks(
  rec: BranchRecord | undefined,
  kind: Manifest['commit']['kind'],
  pass: ProtectionPass | undefined,
): Pick<Manifest['commit'], 'request' | 'bypass'> {
  const change = guardedChangeOf(kind);
  const request = change === 'merge' && pass?.request !== undefined ? { request: pass.request } : {};
  if (rec?.protection === undefined || change === undefined) return request;
  const v = protectionVerdict({ branch: rec.name, rule: rec.protection, change, pass });
  if (!v.allowed) throw new BranchgraphError('branch_protected', v.reason, { details: { branch: rec.name } });
  return v.bypassed ? { ...request, bypass: true } : request;
}

/** Whether `s` is a later version of the lineage `than` is on (true when there is no `than`). */
function newer(s: Snapshot, than: Snapshot | undefined): boolean {
  return than === undefined || (s.manifest.lineage === than.manifest.lineage && s.manifest.version > than.manifest.version);
}

function checkExpectedHead(branch: string, head: Snapshot, expected: string | undefined): void {
  if (expected === undefined || head.manifest.commit.id === expected) return;
  throw new BranchgraphError('head_moved', `branch ${branch} is at ${head.manifest.commit.id}, not ${expected}`, {
    details: { branch, expected, actual: head.manifest.commit.id },
  });
}

/**
 * The manifest's tables after the plan's changes (sorted by name), and the changes for the table
 * tree, each run with its origin (run-origin.ts).
 */
function changedTables(c: { prev: Manifest; plan: ChangePlan<unknown>; origin: ManifestRef }): {
  tables: Record<string, TableEntry>;
  changes: Map<string, TableEntry | undefined>;
} {
  const { prev, plan, origin } = c;
  const tables: Record<string, TableEntry> = { ...prev.tables };
  const changes = new Map<string, TableEntry | undefined>();
  for (const [name, t] of Object.entries(plan.tables ?? {})) {
    if (t?.runs.some((r) => r.source !== undefined))
      throw new BranchgraphError('internal', `table ${name} would be published with rows that are not stored runs`);
    const indexes = (t as IndexedVersion | null)?.indexes;
    const entry =
      t === null
        ? undefined
        : stampOrigins({ runs: t.runs, ...(indexes !== undefined ? { indexes } : {}) }, prev.tables[name], {
            origin,
            // A write may fold its table's newest runs (append-run.ts): a compaction of its own.
            compaction: plan.kind === 'compact' || plan.kind === 'write',
          });
    changes.set(name, entry);
    if (entry === undefined) delete tables[name];
    else tables[name] = entry;
  }
  return { tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), changes };
}

function inlineSchema(schema: Schema): { schemaDoc?: Schema } {
  return schemaTextOf(schema).length <= MAX_INLINE_SCHEMA_BYTES ? { schemaDoc: schema } : {};
}
