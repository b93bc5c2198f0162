/**
 * Deterministic simulation: seeded programs of writes, WAL ingest from two
 * shards (one of them shared by a second process, as two misconfigured
 * servers would), catch-up (serial or pipelined, various caps and budgets)
 * by either process, branch create/delete, criss-cross histories (with a
 * change reverted between the two best bases), schemas tightened and
 * loosened on one branch, concurrent writers on one branch (group commit),
 * merges at widths 1/2/4 (some from a fresh process, planned on the heads
 * the branches' hints name), dry runs, GC at grace 0
 * beside other operations while the clock jumps past GC's floor and each
 * process's clock is skewed up to an hour from the store's, keys from
 * the whole UTF-16 space, and restarts, run against the real engine on a
 * memory store that injects transient failures, lost responses and slow
 * calls, and checked after every step against a reference model that keeps
 * full histories. An operation that fails may or may not have landed (a
 * lost response), so the state must then equal the model either before or
 * after it; what the model refuses (ill-formed text, a row the schema
 * forbids, a schema its rows break) must be refused and change nothing.
 *
 * Ingest is modelled as a write: acknowledged rows are visible at once. Its
 * history differs (pending rows are not commits until folded, and folds are
 * commits the model lacks), so once a program has ingested, a merge may be
 * named differently (fast-forward instead of already up to date, merged
 * with no net change); the state must still be exactly the model's.
 *
 * SIM_SEEDS (default 100, which keeps `npm test` inside its time budget; CI
 * runs seeds 101-500 besides), SIM_FIRST_SEED, SIM_OPS and SIM_PARALLEL (seeds at a
 * time, default 4) tune a run; a failure prints the one line that
 * reproduces it.
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { allRows } from '../src/graph/reads.js';
import { indexProblems } from '../src/graph/index-maintenance.js';
import { encodeUnique, uniqueSpec } from '../src/table/secondary-index.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { findType } from '../src/model/schema.js';
import { Prng } from '../src/model/prng.js';
import { FaultStore } from '../src/store/fault-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { ReferenceModel, type State } from './support/reference-model.js';
import { isWellFormed } from '../src/model/text.js';
import { WalWriter } from '../src/wal/wal-writer.js';
import { catchUp } from '../src/wal/catch-up.js';
import type { WriteOp } from '../src/graph/write-batch.js';

const SEEDS = Number(process.env.SIM_SEEDS ?? 100);
const FIRST = Number(process.env.SIM_FIRST_SEED ?? 1);
const OPS = Number(process.env.SIM_OPS ?? 16);
// Keys from across the UTF-16 space: NUL, an astral character, the last BMP code point.
// The schema on a branch switches between these; the tight one forbids a = 2, which writes produce.
// `u` is @unique and `E` holds a self-edge per upserted row, so every step exercises both kinds of
// secondary index; `u` is derived from the key and `b` (engineOps), so it never clashes and the
// model, which knows neither, predicts every outcome unchanged.
const EDGES = '\nedge E: P -> P {}';
const LOOSE = `node P { id: string @key\n a: int?\n b: int?\n u: string? @unique }${EDGES}`;
const TIGHT = `node P { id: string @key\n a: int? @range(0, 1)\n b: int?\n u: string? @unique }${EDGES}`;
const KEYS = ['k1', '\u0000k', '\u{1F600}', 'k\uffff'];
/** Any two UTF-16 code units: usually well-formed, sometimes a lone surrogate the engine must refuse. */
const anyUnits = (rng: Prng): string => String.fromCharCode(0xd700 + rng.int(0x1000), rng.chance(0.5) ? 0x41 : 0xdc00 + rng.int(0x400));
/** Tiny manifest parts: the simulation's graphs then store tables and ancestry as deep part trees. */
const PART_BYTES = 160;
/** Run lists of more than two runs keep their older runs in run-list parts, which faults then hit too. */
const INLINE_RUNS = 2;
/** Writes fold a due stretch from four runs on (the default waits for eight): folds meet faults, merges and history. */
const FOLD = { minRuns: 4, maxRows: 64 };
const RETRYABLE = new Set(['store_unavailable', 'publish_contention']);
/** How the engine refuses what the model refuses: bad input, a write its schema forbids, a schema its rows break. */
const REFUSALS = new Set(['invalid_input', 'constraint_violation', 'schema_incompatible']);

/** Open, retrying transient failures, as a restarting process would. */
async function openRetrying(store: FaultStore, clock: () => number, jitter: Prng): Promise<Graph> {
  // The publisher's backoff draws from the seed too, so racing publishers replay exactly.
  const random = () => jitter.next();
  for (let i = 0; ; i++) {
    try {
      return await Graph.open(store, { clock, random, partBytes: PART_BYTES, inlineRuns: INLINE_RUNS, inlineCompaction: FOLD });
    } catch (e) {
      if (!isBranchgraphError(e) || !RETRYABLE.has(e.code) || i > 50) throw e;
    }
  }
}

/**
 * What the state of a branch is: its rows, and whether its schema is the
 * tight one. A schema change moves no row, so without the second a schema
 * change that landed behind a lost response would pass for one that did not.
 */
const SCHEMA_ENTRY = '#schema';

type ModelOp = { op: 'upsert' | 'update' | 'delete'; id: string; a?: number; b?: number };

/**
 * A model batch as the engine is sent it: `u` follows `b`, and each row the batch upserts and
 * keeps gets its self-edge, written last (an edge to a node the batch deletes is refused).
 */
function engineOps(ops: readonly ModelOp[]): WriteOp[] {
  const kept = new Set<string>();
  const out: WriteOp[] = ops.map((o) => {
    if (o.op === 'delete') {
      kept.delete(o.id);
      return { op: 'delete', table: 'P', values: { id: o.id } };
    }
    const u = o.b !== undefined ? { u: `${o.id}#${o.b}` } : {};
    if (o.op === 'update')
      return {
        op: 'update',
        table: 'P',
        values: { id: o.id, ...(o.a !== undefined ? { a: o.a } : {}), ...(o.b !== undefined ? { b: o.b } : {}), ...u },
      };
    kept.add(o.id);
    return { op: 'upsert', table: 'P', values: { id: o.id, a: o.a ?? null, b: o.b ?? null, ...u } };
  });
  return [...out, ...[...kept].map((id): WriteOp => ({ op: 'upsert', table: 'E', values: { from: id, to: id } }))];
}

async function engineState(g: Graph): Promise<Map<string, State>> {
  const out = new Map<string, State>();
  for (const b of (await g.listBranches()).branches) {
    const head = await g.branchHead(b.record.name);
    // Index and table agree after every step, on every branch.
    const wrong = await indexProblems(g.ports.runFiles, head);
    if (wrong.length > 0) throw new Error(`branch ${b.record.name}: ${wrong.join('; ')}`);
    const rows = (await allRows({ tables: g.ports.tables, snap: head, table: 'P' })).map(({ key, row }) => {
      const { u, ...rest } = row;
      if (u !== `${key}#${String(row.b)}`) throw new Error(`branch ${b.record.name}: ${key} has u ${String(u)}`);
      return { key, row: rest };
    });
    // Lookups through the index (and the tail of runs above it) find each value's one holder.
    const byValue = await g.ports.tables.table(head, 'P').indexes.holders(
      uniqueSpec('u'),
      rows.map((r) => encodeUnique(`${r.key}#${String(r.row.b)}`)),
    );
    for (const r of rows) {
      const found = byValue.get(encodeUnique(`${r.key}#${String(r.row.b)}`));
      if (JSON.stringify(found) !== JSON.stringify([r.key]))
        throw new Error(`branch ${b.record.name}: the u index finds ${JSON.stringify(found)} for ${r.key}`);
    }
    const edges = (await allRows({ tables: g.ports.tables, snap: head, table: 'E' })).map(
      (e) => `${String(e.row.from)}>${String(e.row.to)}`,
    );
    if (JSON.stringify(edges) !== JSON.stringify(rows.map((r) => `${r.key}>${r.key}`)))
      throw new Error(`branch ${b.record.name}: edges ${JSON.stringify(edges)} are not one self-edge per row`);
    const tight = findType(head.schema, 'P')?.props.some((p) => p.name === 'a' && p.range !== null) === true;
    out.set(b.record.name, new Map([...rows.map((r) => [r.key, r.row] as [string, unknown]), [SCHEMA_ENTRY, { tight }]]) as State);
  }
  return out;
}

function modelState(m: ReferenceModel): Map<string, State> {
  return new Map([...m.branches.keys()].sort().map((b) => [b, new Map([...m.state(b), [SCHEMA_ENTRY, { tight: m.tight(b) }]]) as State]));
}

const canon = (s: Map<string, State>): string =>
  JSON.stringify([...s].sort(([a], [b]) => (a < b ? -1 : 1)).map(([b, st]) => [b, [...st].sort(([x], [y]) => (x < y ? -1 : 1))]));

type Settled = PromiseSettledResult<Awaited<ReturnType<typeof mergeBranches>>>;

/**
 * The model after `sources` merged into `into` one at a time in some order, each answering what the
 * engine answered (an acknowledged outcome as the model predicts it at that point; a retryable
 * failure as landed or not), whose state is `observed`; or why there is none.
 */
function mergedInSomeOrder(a: {
  before: ReferenceModel;
  into: string;
  sources: string[];
  results: Settled[];
  observed: string;
  walUsed: boolean;
}): ReferenceModel | string {
  const { into, sources, results } = a;
  for (const r of results)
    if (
      r.status === 'rejected' &&
      !(isBranchgraphError(r.reason) && (RETRYABLE.has(r.reason.code) || r.reason.code === 'schema_incompatible'))
    )
      return `a merge failed: ${String(r.reason)}`;
  const search = (m: ReferenceModel, left: number[]): ReferenceModel | undefined => {
    if (left.length === 0) return canon(modelState(m)) === a.observed ? m : undefined;
    for (const i of left) {
      const rest = left.filter((j) => j !== i);
      const source = sources[i] as string;
      const r = results[i] as Settled;
      let outcomes = m.mergeOutcomes(source, into);
      const landed = (o: (typeof outcomes)[number]): ReferenceModel => {
        const next = m.clone();
        next.applyMerge(source, into, o.state as State, o.tight);
        return next;
      };
      let options: ReferenceModel[];
      if (r.status === 'rejected') {
        const refused = isBranchgraphError(r.reason, 'schema_incompatible');
        if (refused && !outcomes.every((o) => o.outcome === 'schema_incompatible')) continue;
        // A retryable failure may or may not have landed.
        options = [m, ...(refused ? [] : outcomes.filter((o) => o.state !== undefined).map(landed))];
      } else {
        const got = r.value.status === 'success' ? r.value.outcome : 'conflicts';
        let matching = outcomes.filter((o) => o.outcome === got);
        // As for single merges: folds and catch-ups are commits the model lacks (see above).
        if (matching.length === 0 && a.walUsed && got !== 'conflicts' && outcomes.every((o) => o.outcome !== 'conflicts'))
          matching = outcomes = outcomes.map((o) => ({ ...o, state: o.state ?? m.state(into) }));
        if (matching.length === 0) continue;
        options = got === 'merged' || got === 'fast_forward' ? matching.map(landed) : [m];
      }
      for (const o of options) {
        const found = search(o, rest);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return (
    search(
      a.before.clone(),
      sources.map((_, i) => i),
    ) ?? 'no order of the merges explains what each answered and the state'
  );
}

async function simulate(seed: number): Promise<void> {
  const rng = new Prng(seed);
  // The true time: the store stamps objects with it, and each process reads it skewed by up to an
  // hour either way, as unsynchronised hosts would. GC must judge ages by the store's clock alone.
  let wall = Date.UTC(2026, 0, 1);
  const inner = new MemoryStore(() => wall);
  const skews = [rng.int(7_200_001) - 3_600_000, rng.int(7_200_001) - 3_600_000];
  const processClock = (i: number) => () => wall + (skews[i] as number);
  const setup = await Graph.open(inner, { partBytes: PART_BYTES, inlineRuns: INLINE_RUNS, inlineCompaction: FOLD });
  await setup.applySchema('main', LOOSE);
  const faulty = new FaultStore(inner, { seed, transientRate: 0.03, lostResponseRate: 0.03, maxDelayBeforeMs: rng.chance(0.2) ? 2 : 0 });
  // The wall clock jumps between steps, past GC's floor at times, so GC (asked for grace 0,
  // concurrently with other operations) really deletes what it judges garbage.
  const jitters = [new Prng(seed * 2 + 1), new Prng(seed * 2 + 2)];
  let g = await openRetrying(faulty, processClock(0), jitters[0] as Prng);
  // One clock for every writer, across restarts, so stamps order ingest exactly as the program does.
  let clock = 1_000_000;
  // A second process on the same store, misconfigured with the first one's shard name `w1`:
  // nothing either acknowledges may be lost.
  let twin = await openRetrying(faulty, processClock(1), jitters[1] as Prng);
  const writersFor = (graph: Graph, other: Graph) => [
    ...['w1', 'w2'].map((shard) => new WalWriter(graph.ports, { shard, now: () => ++clock })),
    new WalWriter(other.ports, { shard: 'w1', now: () => ++clock }),
  ];
  let writers = writersFor(g, twin);
  let model = new ReferenceModel();
  let branchNo = 0;
  let walUsed = false;
  const clean = await Graph.open(inner, { partBytes: PART_BYTES, inlineRuns: INLINE_RUNS, inlineCompaction: FOLD });

  const forced: ({ source: string; into: string } | { branch: string; key: string; remove?: true })[] = [];
  let crossNo = 0;
  for (let step = 0; step < OPS; step++) {
    wall += rng.pick([0, 0, 1_000, 20 * 60_000, 3 * 3600_000]);
    const branches = [...model.branches.keys()].sort();
    const pick = () => rng.pick(branches);
    // A criss-cross in progress dictates the next merges; otherwise the dice do.
    const queued = forced.shift();
    // A queued step whose branches are gone (a step before it failed) is dropped.
    const next =
      queued !== undefined && 'source' in queued && model.branches.has(queued.source) && model.branches.has(queued.into)
        ? queued
        : undefined;
    const nextWrite = queued !== undefined && 'branch' in queued && model.branches.has(queued.branch) ? queued : undefined;
    const roll = next !== undefined ? 0.7 : nextWrite !== undefined ? 0 : rng.next();
    const before = model.clone();
    let after: ReferenceModel | undefined;
    let run: () => Promise<unknown>;
    let label: string;
    let refused = false;
    /** The step changes history but no row: its outcome is read from the head, not the rows. */
    let historyOnly = false;
    if (roll < 0.45 && nextWrite === undefined && rng.chance(0.2)) {
      // Concurrent writers on one branch: group commit may publish them in one commit or several,
      // but each lands whole or not at all, in the order they arrived, and none that was
      // acknowledged is missing. Upserts of a in {0, 1} are never refused, so the model needs no order of refusals.
      const branch = pick();
      const parts = Array.from({ length: 2 + rng.int(2) }, () =>
        Array.from({ length: 1 + rng.int(2) }, () => ({ op: 'upsert' as const, id: rng.pick(KEYS), a: rng.int(2), b: rng.int(3) })),
      );
      // Half the time a full compaction of the branch runs beside them, from this process (in its
      // turn among the writes) or from the other one (racing them at the store).
      const compactor = rng.chance(0.5) ? (rng.chance(0.3) ? twin : g) : undefined;
      label = `concurrent writes ${branch} ${JSON.stringify(parts)}${compactor === undefined ? '' : compactor === g ? ' + compaction' : ' + compaction (other process)'}`;
      if (process.env.SIM_TRACE) console.log(`step ${step} ${label}`);
      const headBefore = (await clean.branchHead(branch)).manifest.commit.id;
      const settled = await Promise.allSettled([
        ...parts.map((ops) => g.write(branch, engineOps(ops))),
        ...(compactor === undefined ? [] : [compactor.compact(branch, { mode: 'full' })]),
      ]);
      const results = settled.slice(0, parts.length);
      for (const r of settled) {
        if (r.status === 'rejected' && !(isBranchgraphError(r.reason) && RETRYABLE.has(r.reason.code)))
          throw new Error(`seed ${seed} step ${step} ${label}: ${String(r.reason)}`);
      }
      const observed = canon(await engineState(clean));
      // Every subset of the writes that includes the acknowledged ones, applied in order.
      let match: ReferenceModel | undefined;
      for (let mask = 0; mask < 1 << parts.length && match === undefined; mask++) {
        if (results.some((r, i) => r.status === 'fulfilled' && (mask & (1 << i)) === 0)) continue;
        const m = before.clone();
        parts.forEach((ops, i) => {
          if ((mask & (1 << i)) !== 0) m.write(branch, ops);
        });
        if (canon(modelState(m)) === observed) match = m;
      }
      if (match === undefined)
        throw new Error(
          `seed ${seed} step ${step} ${label}: the state is not the model's after any ordered subset of the writes including every acknowledged one\n  engine ${observed}`,
        );
      // A compaction that landed is a commit of its own (rows unchanged): read from the history.
      for (let id = (await clean.branchHead(branch)).manifest.commit.id; id !== headBefore; ) {
        const c = (await clean.commitSnapshot(id)).manifest.commit;
        if (c.kind === 'compact') match.recordNoopCommit(branch);
        id = c.parentIds[0] as string;
      }
      model = match;
      continue;
    } else if (roll < 0.45) {
      const branch = nextWrite?.branch ?? pick();
      const existing = [...model.state(branch).keys()];
      // A criss-cross's writes add (or take back) a key of their own, so its merges are three-way and clean.
      const ops =
        nextWrite !== undefined
          ? [
              nextWrite.remove
                ? { op: 'delete' as const, id: nextWrite.key }
                : { op: 'upsert' as const, id: nextWrite.key, a: rng.int(2), b: rng.int(3) },
            ]
          : Array.from({ length: 1 + rng.int(3) }, () => {
              const r = rng.next();
              const id = rng.chance(0.05) ? anyUnits(rng) : rng.pick(KEYS);
              if (r < 0.5) return { op: 'upsert' as const, id, a: rng.int(3), b: rng.int(3) };
              if (r < 0.8 && existing.length > 0)
                return rng.chance(0.5)
                  ? { op: 'update' as const, id: rng.pick(existing), a: rng.int(3) }
                  : { op: 'update' as const, id: rng.pick(existing), b: rng.int(3) };
              return { op: 'delete' as const, id };
            });
      // Updates must target rows that exist when they run, in order.
      const live = new Set(existing);
      const valid = ops.filter((o) => {
        if (o.op === 'update' && !live.has(o.id)) return false;
        if (o.op === 'delete') live.delete(o.id);
        else live.add(o.id);
        return true;
      });
      const ingest = rng.chance(0.4);
      const writer = rng.pick(writers);
      label = `${ingest ? `ingest (${writer.shard})` : 'write'} ${branch} ${JSON.stringify(valid)}`;
      after = model.clone();
      // Ill-formed keys are refused as input; a row the branch's tight schema forbids as a constraint.
      refused = valid.some((o) => !isWellFormed(o.id)) || after.write(branch, valid) === 'refused';
      if (refused) after = model.clone();
      const writeOps = engineOps(valid);
      walUsed ||= ingest;
      run = () => (ingest ? writer.ingest(branch, writeOps) : g.write(branch, writeOps));
    } else if (roll < 0.6) {
      const from = pick();
      const name = `b${++branchNo}`;
      label = `branch create ${name} from ${from}`;
      after = model.clone();
      after.branches.set(name, model.branches.get(from) as number);
      run = () => g.createBranch(name, { branch: from });
      // Most of the time the copy starts a criss-cross: `from` and another branch both change, the other
      // merges into `from`, the copy (from's old head) merges into the other, and then `from` merges
      // into it, over two best bases.
      const other = branches.filter((b) => b !== from);
      if (other.length > 0 && rng.chance(0.8)) {
        const y = rng.pick(other);
        // Then `from` takes back the key `y` added: a change between the two best bases, reverted on one
        // side, which the merge must keep reverted (one best base alone would bring the key back).
        const k = `x${++crossNo}`;
        forced.push(
          { branch: from, key: `${k}a` },
          { branch: y, key: `${k}b` },
          { source: y, into: from },
          { source: name, into: y },
          { branch: from, key: `${k}b`, remove: true },
          { source: from, into: y },
        );
      }
    } else if (roll < 0.66 && branches.length > 1) {
      const name = rng.pick(branches.filter((b) => b !== 'main'));
      label = `branch delete ${name}`;
      after = model.clone();
      after.branches.delete(name);
      run = () => g.deleteBranch(name);
    } else if (roll < 0.9 && next === undefined && branches.length > 2 && rng.chance(0.4)) {
      // Concurrent merges into one branch: this process plans each on the manifest the one before it
      // built (publication lanes). Each must answer as if the merges had run one at a time in some
      // order, and the state must be the model's after them in that order.
      const into = pick();
      const others = branches.filter((b) => b !== into);
      const sources = Array.from(
        { length: Math.min(others.length, 2 + rng.int(2)) },
        () => others.splice(rng.int(others.length), 1)[0] as string,
      );
      label = `concurrent merges ${sources.join(', ')} into ${into}`;
      if (process.env.SIM_TRACE) console.log(`step ${step} ${label}`);
      const results = await Promise.allSettled(
        sources.map((source) => mergeBranches(g.ports, mergeSpec({ source, into, width: rng.pick([1, 2, 4] as const) }))),
      );
      const observed = canon(await engineState(clean));
      const match = mergedInSomeOrder({ before, into, sources, results, observed, walUsed });
      if (typeof match === 'string') throw new Error(`seed ${seed} step ${step} ${label}: ${match}\n  engine ${observed}`);
      model = match;
      continue;
    } else if (roll < 0.9 && branches.length > 1) {
      const source = next?.source ?? pick();
      const into = next?.into ?? rng.pick(branches.filter((b) => b !== source));
      const width = rng.pick([1, 2, 4] as const);
      const dryRun = rng.chance(0.15);
      label = `merge ${source} into ${into} width ${width}${dryRun ? ' dry-run' : ''}`;
      if (process.env.SIM_TRACE) console.log(`step ${step} ${label}`);
      const outcomes = model.mergeOutcomes(source, into);
      // Now and then from a fresh process: it plans on the heads the branches' hints name, which the
      // other process, a lost response or a failed hint write may have left stale.
      const cold = rng.chance(0.3) ? await openRetrying(faulty, processClock(0), jitters[0] as Prng) : undefined;
      const r = await mergeBranches((cold ?? g).ports, mergeSpec({ source, into, width, dryRun })).then(
        (x) => ({ ok: x }),
        (e: unknown) => ({ err: e }),
      );
      await cold?.close();
      const observed = await engineState(clean);
      if ('err' in r && outcomes.every((o) => o.outcome === 'schema_incompatible') && isBranchgraphError(r.err, 'schema_incompatible')) {
        if (canon(observed) !== canon(modelState(before)))
          throw new Error(`seed ${seed} step ${step} ${label}: a refused merge changed something`);
        continue;
      }
      if ('err' in r) {
        if (!isBranchgraphError(r.err) || !RETRYABLE.has(r.err.code))
          throw new Error(`seed ${seed} step ${step} ${label}: ${String(r.err)}`);
        // Unknown outcome: before, or any landed result.
        const candidates = [
          before,
          ...outcomes
            .filter((o) => o.state !== undefined && !dryRun)
            .map((o) => {
              const m = before.clone();
              m.applyMerge(source, into, o.state as State, o.tight);
              return m;
            }),
        ];
        const match = candidates.find((m) => canon(modelState(m)) === canon(observed));
        if (match === undefined)
          throw new Error(`seed ${seed} step ${step} ${label} failed (${r.err.code}) and left a state that is neither before nor after`);
        model = match;
      } else {
        const got = r.ok.status === 'success' ? r.ok.outcome : 'conflicts';
        let matching = outcomes.filter((o) => o.outcome === got);
        if (matching.length === 0 && walUsed && got !== 'conflicts' && outcomes.every((o) => o.outcome !== 'conflicts')) {
          // Pending rows are not commits, and folds, catch-ups and shard registrations are commits the
          // model does not have: the engine may name the outcome differently, but the state must agree.
          matching = outcomes.map((o) => ({ ...o, state: o.state ?? before.state(into) }));
        }
        if (matching.length === 0)
          throw new Error(
            `seed ${seed} step ${step} ${label}: engine says ${got}, model says ${outcomes.map((o) => o.outcome).join(' or ')}`,
          );
        if (!dryRun && (got === 'merged' || got === 'fast_forward')) {
          const options = matching.map((o) => {
            const m = before.clone();
            m.applyMerge(source, into, o.state as State, o.tight);
            return m;
          });
          const match = options.find((m) => canon(modelState(m)) === canon(observed));
          if (match === undefined) throw new Error(`seed ${seed} step ${step} ${label}: merged state differs from the model`);
          model = match;
        }
      }
      continue;
    } else if (roll < 0.9) {
      const branch = pick();
      const opts = { maxGenerations: rng.pick([0, 1, 2, 64]), pipeline: rng.chance(0.5), budgetBytes: rng.pick([1, 4096, 1 << 24]) };
      label = `catch-up ${branch} ${JSON.stringify(opts)}`;
      after = model.clone();
      const by = rng.chance(0.3) ? twin : g;
      run = () => catchUp(by.ports, branch, opts);
    } else if (roll < 0.93) {
      // Compaction changes no state; merges after it must still find their deltas.
      const branch = pick();
      const mode = rng.chance(0.3) ? ('full' as const) : ('tiered' as const);
      label = `compact ${branch} ${mode}`;
      const moved = model.clone();
      after = moved;
      const by = rng.chance(0.3) ? twin : g;
      run = async () => {
        const headBefore = (await clean.branchHead(branch)).manifest.commit.id;
        try {
          await by.compact(branch, { mode });
        } finally {
          // A published compaction is a commit: later merges see the branch moved. Rows are the same
          // either way, so whether it landed (even when the call failed) is read from the head.
          if ((await clean.branchHead(branch)).manifest.commit.id !== headBefore) moved.recordNoopCommit(branch);
        }
      };
      historyOnly = true;
    } else if (roll < 0.95) {
      // Tighten or loosen one branch's schema, so merges meet a schema changed on one side only.
      const branch = pick();
      const tight = !model.tight(branch);
      label = `schema ${branch} ${tight ? 'tight' : 'loose'}`;
      after = model.clone();
      refused = after.applySchema(branch, tight) === 'refused';
      if (refused) after = model.clone();
      run = () => g.applySchema(branch, tight ? TIGHT : LOOSE);
    } else if (roll < 0.97) {
      label = 'gc';
      after = model.clone();
      run = () => g.gc({ graceMs: 0 });
    } else {
      g = await openRetrying(faulty, processClock(0), jitters[0] as Prng);
      twin = await openRetrying(faulty, processClock(1), jitters[1] as Prng);
      writers = writersFor(g, twin);
      continue;
    }
    if (process.env.SIM_TRACE) console.log(`step ${step} ${label}`);
    let failed: unknown;
    try {
      const sweep = rng.chance(0.15) ? (rng.chance(0.5) ? g : twin).gc({ graceMs: 0 }).catch((e: unknown) => e) : undefined;
      await run();
      const swept = await sweep;
      if (swept instanceof Error && !(isBranchgraphError(swept) && RETRYABLE.has(swept.code)))
        throw new Error(`seed ${seed} step ${step} gc beside ${label}: ${String(swept)}`);
    } catch (e) {
      failed = e;
    }
    const observed = canon(await engineState(clean));
    if (refused) {
      // A transient fault may strike before validation does; either way nothing changes.
      const expected = isBranchgraphError(failed) && (REFUSALS.has(failed.code) || RETRYABLE.has(failed.code));
      if (!expected || observed !== canon(modelState(before)))
        throw new Error(`seed ${seed} step ${step} ${label}: ill-formed text was not refused cleanly (${String(failed)})`);
      model = before;
    } else if (failed !== undefined) {
      if (!isBranchgraphError(failed) || !RETRYABLE.has(failed.code))
        throw new Error(`seed ${seed} step ${step} ${label}: ${String(failed)}`);
      if (historyOnly && observed === canon(modelState(before))) model = after as ReferenceModel;
      else if (observed === canon(modelState(before))) model = before;
      else if (after !== undefined && observed === canon(modelState(after))) model = after;
      else throw new Error(`seed ${seed} step ${step} ${label} failed (${failed.code}) and left a state that is neither before nor after`);
    } else {
      model = after as ReferenceModel;
      if (observed !== canon(modelState(model)))
        throw new Error(
          `seed ${seed} step ${step} ${label}: state differs from the model\n  engine ${observed}\n  model  ${canon(modelState(model))}`,
        );
    }
  }
}

/**
 * Seeds run a few at a time: each has its own store, clocks and random
 * stream, and much of a seed's time is spent waiting (injected delays,
 * backoff), so interleaving them uses that time without changing any
 * seed's program.
 */
const PARALLEL_SEEDS = Number(process.env.SIM_PARALLEL ?? 4);

describe('deterministic simulation', () => {
  it(`${SEEDS} seeded programs agree with the reference model under faults`, async () => {
    const started = Date.now();
    let ran = 0;
    let nextSeed = FIRST;
    const lane = async (): Promise<void> => {
      while (nextSeed < FIRST + SEEDS) {
        const seed = nextSeed++;
        try {
          await simulate(seed);
        } catch (e) {
          throw new Error(
            `${(e as Error).message}\nreproduce: SIM_FIRST_SEED=${seed} SIM_SEEDS=1 SIM_OPS=${OPS} npx vitest run test/simulation.test.ts`,
          );
        }
        ran++;
      }
    };
    await Promise.all(Array.from({ length: PARALLEL_SEEDS }, lane));
    expect(ran).toBe(SEEDS);
    console.log(
      `simulation: ${ran} seeds × ${OPS} operations in ${Date.now() - started} ms; ${ReferenceModel.crissCrosses} merges over criss-cross histories`,
    );
  }, 600_000);
});
