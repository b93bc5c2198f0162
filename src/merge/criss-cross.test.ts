/**
 * Criss-cross histories: with several best common ancestors, the merge
 * builds a virtual base from all of them. A reference computes the expected
 * outcome from full histories (every commit's whole state, ancestors by
 * walking parents), independently of ancestry vectors, runs and storage.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../graph/graph.js';
import { MemoryStore } from '../store/memory-store.js';
import { merge, mergeOk, mustWrite, rowsOf } from '../../test/support/fixtures.js';

const SCHEMA = 'node P { id: string @key\n v: int? }\nnode Q { id: string @key\n w: int? }\nedge E: P -> Q';

async function graph(): Promise<Graph> {
  const g = await Graph.open(new MemoryStore());
  await g.applySchema('main', SCHEMA);
  return g;
}

/** main and b merged into each other, so their next merge has two best bases. */
async function crissCross(g: Graph): Promise<void> {
  await mustWrite(g, 'main', [
    { op: 'insert', table: 'P', values: { id: 'x', v: 0 } },
    { op: 'insert', table: 'Q', values: { id: 'q' } },
  ]);
  await g.createBranch('b', { branch: 'main' });
  await mustWrite(g, 'main', [{ op: 'update', table: 'P', values: { id: 'x', v: 1 } }]);
  await mustWrite(g, 'b', [
    { op: 'insert', table: 'P', values: { id: 'y', v: 1 } },
    { op: 'insert', table: 'E', values: { from: 'y', to: 'q' } },
  ]);
  // The criss-cross: each side merges the other's head as it was before either merge.
  const mainBefore = (await g.branchHead('main')).manifest.commit.id;
  await g.createBranch('b-copy', { branch: 'b' });
  await mergeOk(g, 'b', { into: 'main' });
  await g.createBranch('main-old', { commit: mainBefore });
  await mergeOk(g, 'main-old', { into: 'b' });
}

describe('criss-cross merges', () => {
  it('regression: a property reverted on one side stays reverted, and a node deleted on one side stays deleted with its edges', async () => {
    const g = await graph();
    await crissCross(g);
    // Both sides now hold x.v = 1 and y with its edge. main reverts x.v; b deletes y and its edge.
    await mustWrite(g, 'main', [{ op: 'update', table: 'P', values: { id: 'x', v: 0 } }]);
    await mustWrite(g, 'b', [{ op: 'delete', table: 'P', values: { id: 'y' } }]);
    const r = await mergeOk(g, 'b', { into: 'main' });
    expect(r.outcome).toBe('merged');
    expect(await rowsOf(g, 'main', 'P')).toEqual({ x: { id: 'x', v: 0 } });
    expect(await rowsOf(g, 'main', 'E')).toEqual({});
  });

  it('the same criss-cross merged the other way gives the same rows', async () => {
    const g = await graph();
    await crissCross(g);
    await mustWrite(g, 'main', [{ op: 'update', table: 'P', values: { id: 'x', v: 0 } }]);
    await mustWrite(g, 'b', [{ op: 'delete', table: 'P', values: { id: 'y' } }]);
    await mergeOk(g, 'main', { into: 'b' });
    expect(await rowsOf(g, 'b', 'P')).toEqual({ x: { id: 'x', v: 0 } });
    expect(await rowsOf(g, 'b', 'E')).toEqual({});
  });

  it('a conflict between the common ancestors is reported, never resolved silently', async () => {
    const g = await graph();
    await mustWrite(g, 'main', [{ op: 'insert', table: 'P', values: { id: 'x', v: 0 } }]);
    await g.createBranch('b', { branch: 'main' });
    await mustWrite(g, 'main', [{ op: 'update', table: 'P', values: { id: 'x', v: 1 } }]);
    await mustWrite(g, 'b', [{ op: 'update', table: 'P', values: { id: 'x', v: 2 } }]);
    const mainBefore = (await g.branchHead('main')).manifest.commit.id;
    const bBefore = (await g.branchHead('b')).manifest.commit.id;
    // Each side resolves the divergence its own way, by merging a copy of the other after settling x first.
    await g.createBranch('b-old', { commit: bBefore });
    await mustWrite(g, 'b-old', [{ op: 'update', table: 'P', values: { id: 'x', v: 1 } }]);
    await mergeOk(g, 'b-old', { into: 'main' });
    await g.createBranch('main-old', { commit: mainBefore });
    await mustWrite(g, 'main-old', [{ op: 'update', table: 'P', values: { id: 'x', v: 2 } }]);
    await mergeOk(g, 'main-old', { into: 'b' });
    const r = await merge(g, 'b', { into: 'main' });
    expect(r.status).toBe('conflicts');
    if (r.status !== 'conflicts') return;
    expect(r.report.items.map((c) => [c.kind, c.table, c.key, c.property])).toEqual([['DivergentUpdate', 'P', 'x', 'v']]);
  });
});

// ---- the full-history reference -------------------------------------------

type State = Map<string, number | null>;
interface RefCommit {
  state: State;
  parents: number[];
  generation: number;
}

class History {
  readonly commits: RefCommit[] = [{ state: new Map(), parents: [], generation: 1 }];
  readonly heads = new Map<string, number>([['main', 0]]);

  commit(branch: string, state: State, parents: number[]): void {
    this.commits.push({ state, parents, generation: 1 + Math.max(...parents.map((p) => (this.commits[p] as RefCommit).generation)) });
    this.heads.set(branch, this.commits.length - 1);
  }

  ancestors(c: number): Set<number> {
    const seen = new Set<number>();
    const stack = [c];
    while (stack.length > 0) {
      const x = stack.pop() as number;
      if (seen.has(x)) continue;
      seen.add(x);
      stack.push(...(this.commits[x] as RefCommit).parents);
    }
    return seen;
  }

  /** Best common ancestors, newest (generation, then creation) first. */
  bestBases(a: number, b: number): number[] {
    const pa = this.ancestors(a);
    const common = [...this.ancestors(b)].filter((x) => pa.has(x));
    const best = common.filter((c) => !common.some((d) => d !== c && this.ancestors(d).has(c)));
    return best.sort((x, y) => (this.commits[y] as RefCommit).generation - (this.commits[x] as RefCommit).generation || y - x);
  }

  /** The base state of a and b: recursive over several best bases; 'conflict' when building it conflicts. */
  baseState(a: number, b: number): State | 'conflict' {
    const [first, ...rest] = this.bestBases(a, b);
    let acc: State = (this.commits[first as number] as RefCommit).state;
    let accId = first as number;
    for (const next of rest) {
      const inner = this.baseState(accId, next);
      if (inner === 'conflict') return 'conflict';
      const merged = threeWay(inner, acc, (this.commits[next] as RefCommit).state);
      if (merged === 'conflict') return 'conflict';
      acc = merged;
      // A virtual commit whose parents are the two merged bases.
      this.commits.push({ state: acc, parents: [accId, next], generation: 0 });
      accId = this.commits.length - 1;
    }
    return acc;
  }
}

function threeWay(base: State, x: State, y: State): State | 'conflict' {
  const out: State = new Map();
  for (const k of new Set([...base.keys(), ...x.keys(), ...y.keys()])) {
    const [b, s, t] = [base.get(k) ?? null, x.get(k) ?? null, y.get(k) ?? null];
    let v: number | null;
    if (s === b) v = t;
    else if (t === b || s === t) v = s;
    else return 'conflict';
    if (v !== null) out.set(k, v);
  }
  return out;
}

type Step =
  | { kind: 'write'; branch: number; key: number; value: number | null }
  | { kind: 'merge'; from: number; into: number }
  | { kind: 'branch'; from: number }
  /** A branch at an older commit: merging such copies both ways makes criss-crosses. */
  | { kind: 'old'; commit: number }
  /** Merge X's head into Y and Y's head (as it was) into X: a criss-cross. */
  | { kind: 'cross'; x: number; y: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('write' as const), branch: fc.nat(9), key: fc.nat(1), value: fc.option(fc.nat(1), { nil: null }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('merge' as const), from: fc.nat(9), into: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('branch' as const), from: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('old' as const), commit: fc.nat(40) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cross' as const), x: fc.nat(9), y: fc.nat(9) }) },
);

describe('criss-cross merges against a full-history reference', () => {
  it('every merge over random histories with criss-crosses matches the reference: the same rows, or a conflict exactly when it has one', async () => {
    let crossings = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 8, maxLength: 40 }), async (steps) => {
        const g = await graph();
        const ref = new History();
        const branches = ['main'];
        // Engine commit id of each reference commit that is a real commit.
        const ids = new Map<number, string>([[0, (await g.branchHead('main')).manifest.commit.id]]);
        const record = async (branch: string) => ids.set(ref.heads.get(branch) as number, (await g.branchHead(branch)).manifest.commit.id);
        const mergeChecked = async (from: string, into: string): Promise<void> => {
          if (from === into) return;
          const [s, t] = [ref.heads.get(from) as number, ref.heads.get(into) as number];
          const r = await merge(g, from, { into });
          if (ref.ancestors(t).has(s)) {
            expect(r.status === 'success' && r.outcome).toBe('already_up_to_date');
            return;
          }
          if (ref.ancestors(s).has(t)) {
            expect(r.status === 'success' && r.outcome).toBe('fast_forward');
            ref.commit(into, (ref.commits[s] as RefCommit).state, [t, s]);
            await record(into);
            return;
          }
          if (ref.bestBases(s, t).length > 1) crossings++;
          const base = ref.baseState(s, t);
          const expected = base === 'conflict' ? 'conflict' : threeWay(base, (ref.commits[s] as RefCommit).state, (ref.commits[t] as RefCommit).state);
          if (expected === 'conflict') {
            expect(r.status).toBe('conflicts');
            return;
          }
          expect(r.status === 'success' ? r.outcome : r.report.items.map((c) => `${c.kind} ${c.key}: ${c.message}`)).toBe('merged');
          ref.commit(into, expected, [t, s]);
          await record(into);
        };
        for (const step of steps) {
          if (step.kind === 'old') {
            const known = [...ids.keys()];
            const c = known[step.commit % known.length] as number;
            const name = `b${branches.length}`;
            await g.createBranch(name, { commit: ids.get(c) as string });
            ref.heads.set(name, c);
            branches.push(name);
          } else if (step.kind === 'branch') {
            const from = branches[step.from % branches.length] as string;
            const name = `b${branches.length}`;
            await g.createBranch(name, { branch: from });
            ref.heads.set(name, ref.heads.get(from) as number);
            branches.push(name);
          } else if (step.kind === 'write') {
            const branch = branches[step.branch % branches.length] as string;
            const head = ref.heads.get(branch) as number;
            const state = new Map((ref.commits[head] as RefCommit).state);
            const key = `k${step.key}`;
            if ((state.get(key) ?? null) === step.value) continue;
            if (step.value === null) state.delete(key);
            else state.set(key, step.value);
            await mustWrite(g, branch, [step.value === null ? { op: 'delete', table: 'P', values: { id: key } } : { op: 'upsert', table: 'P', values: { id: key, v: step.value } }]);
            ref.commit(branch, state, [head]);
            await record(branch);
          } else if (step.kind === 'cross') {
            const x = branches[step.x % branches.length] as string;
            const y = branches[step.y % branches.length] as string;
            if (x === y) continue;
            const copy = `b${branches.length}`;
            await g.createBranch(copy, { branch: x });
            ref.heads.set(copy, ref.heads.get(x) as number);
            branches.push(copy);
            await mergeChecked(y, x);
            await mergeChecked(copy, y);
            // Often the next merge of the two has both old heads as best bases.
            await mergeChecked(x, y);
          } else {
            await mergeChecked(branches[step.from % branches.length] as string, branches[step.into % branches.length] as string);
          }
          for (const b of branches) {
            const want = Object.fromEntries([...(ref.commits[ref.heads.get(b) as number] as RefCommit).state].map(([k, v]) => [k, { id: k, v }]));
            expect(await rowsOf(g, b, 'P')).toEqual(want);
          }
        }
      }),
      { numRuns: 300 },
    );
    // The generator must really produce merges with several best bases.
    expect(crossings).toBeGreaterThan(20);
  }, 60_000);
});
