/**
 * A deliberately simple reference model of branches and one table, for the
 * simulation. It keeps every commit's full state and finds merge bases by
 * walking the commit graph, nothing like the engine's ancestry vectors, so
 * agreement between the two means something.
 */
type Row = Record<string, unknown>;
export type State = Map<string, Row>;

interface Commit {
  state: State;
  parents: number[];
  generation: number;
  /** Whether the schema in force is the tight one (`a` within 0..1) rather than the loose one. */
  tight: boolean;
}

/** The one constraint the tight schema adds. */
const breaksTight = (r: Row): boolean => typeof r.a === 'number' && r.a > 1;

export type MergeOutcome = {
  outcome: 'already_up_to_date' | 'fast_forward' | 'merged' | 'conflicts' | 'schema_incompatible';
  state?: State;
  tight?: boolean;
};

const eq = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export class ReferenceModel {
  /** Merges (over all models) whose heads had several best common ancestors. */
  static crissCrosses = 0;
  /** Virtual bases (over all models) whose best bases conflicted with each other. */
  static conflictingBases = 0;
  readonly commits: Commit[] = [];
  readonly branches = new Map<string, number>();

  constructor() {
    this.commits.push({ state: new Map(), parents: [], generation: 1, tight: false });
    this.branches.set('main', 0);
  }

  state(branch: string): State {
    return this.commits[this.branches.get(branch) as number]?.state as State;
  }

  tight(branch: string): boolean {
    return this.commits[this.branches.get(branch) as number]?.tight === true;
  }

  clone(): ReferenceModel {
    const m = new ReferenceModel();
    m.commits.length = 0;
    for (const c of this.commits)
      m.commits.push({ state: new Map(c.state), parents: [...c.parents], generation: c.generation, tight: c.tight });
    m.branches.clear();
    for (const [k, v] of this.branches) m.branches.set(k, v);
    return m;
  }

  /** A commit that changes no row (a compaction): history moves, the state stays. */
  recordNoopCommit(branch: string): void {
    this.commit(branch, new Map(this.state(branch)), [this.branches.get(branch) as number]);
  }

  private commit(branch: string, state: State, parents: number[], tight = this.tight(branch)): void {
    const generation = 1 + Math.max(...parents.map((p) => this.commits[p]?.generation ?? 0));
    this.commits.push({ state, parents, generation, tight });
    this.branches.set(branch, this.commits.length - 1);
  }

  /**
   * Apply upserts/updates/deletes: 'refused' when a row it writes breaks the
   * branch's schema (nothing changes), false when nothing changed (no commit).
   */
  write(branch: string, ops: { op: 'upsert' | 'update' | 'delete'; id: string; a?: number; b?: number }[]): boolean | 'refused' {
    const next = new Map(this.state(branch));
    for (const o of ops) {
      const cur = next.get(o.id);
      if (o.op === 'delete') next.delete(o.id);
      else if (o.op === 'upsert') next.set(o.id, { id: o.id, a: o.a ?? null, b: o.b ?? null });
      else if (cur !== undefined)
        next.set(o.id, { ...cur, ...(o.a !== undefined ? { a: o.a } : {}), ...(o.b !== undefined ? { b: o.b } : {}) });
      else throw new Error('model: update of a missing row');
      const written = next.get(o.id);
      if (this.tight(branch) && written !== undefined && breaksTight(written)) return 'refused';
    }
    if (eq([...next].sort(), [...this.state(branch)].sort())) return false;
    this.commit(branch, next, [this.branches.get(branch) as number]);
    return true;
  }

  /** Switch the branch to the tight or loose schema: 'refused' when a row breaks it, false when already so. */
  applySchema(branch: string, tight: boolean): boolean | 'refused' {
    if (this.tight(branch) === tight) return false;
    if (tight && [...this.state(branch).values()].some(breaksTight)) return 'refused';
    this.commit(branch, new Map(this.state(branch)), [this.branches.get(branch) as number], tight);
    return true;
  }

  /** Every commit `c` contains, itself included; `parentsOf` may add commits that exist only in a computation. */
  ancestors(c: number, parentsOf: (c: number) => number[] = (x) => this.commits[x]?.parents ?? []): Set<number> {
    const out = new Set<number>();
    const stack = [c];
    while (stack.length > 0) {
      const x = stack.pop() as number;
      if (out.has(x)) continue;
      out.add(x);
      stack.push(...parentsOf(x));
    }
    return out;
  }

  /** Every best common ancestor, newest first (generation, then creation), as the engine folds them. */
  bestBases(a: number, b: number, ancestorsOf: (c: number) => Set<number> = (c) => this.ancestors(c)): number[] {
    const aa = ancestorsOf(a);
    const common = [...ancestorsOf(b)].filter((x) => aa.has(x));
    const best = common.filter((c) => !common.some((d) => d !== c && ancestorsOf(d).has(c)));
    return best.sort((x, y) => (this.commits[y]?.generation ?? 0) - (this.commits[x]?.generation ?? 0) || y - x);
  }

  /**
   * The base state of two commits: their best common ancestor, or, with
   * several, those merged recursively into a virtual base, where a conflict
   * between them stays as a marker. Virtual commits live only in this computation.
   */
  private baseState(
    a: number,
    b: number,
    virtual: Map<number, number[]>,
    states: Map<number, { state: State; tight: boolean | undefined }>,
  ): { state: State; tight: boolean | undefined } | undefined {
    const ancestorsOf = (c: number): Set<number> => this.ancestors(c, (x) => virtual.get(x) ?? this.commits[x]?.parents ?? []);
    const stateOf = (c: number): { state: State; tight: boolean | undefined } =>
      states.get(c) ?? { state: this.commits[c]?.state as State, tight: this.commits[c]?.tight };
    const [first, ...rest] = this.bestBases(a, b, ancestorsOf);
    if (rest.length > 0) ReferenceModel.crissCrosses++;
    let acc = first as number;
    for (const next of rest) {
      const inner = this.baseState(acc, next, virtual, states);
      // Bases that conflict with each other keep the conflict as markers (never undefined).
      const merged = mergeStates(inner?.state ?? new Map(), stateOf(acc).state, stateOf(next).state, 'mark') as State;
      if ([...merged.values()].some(rowMarked)) ReferenceModel.conflictingBases++;
      const id = -1 - virtual.size;
      virtual.set(id, [acc, next]);
      // Bases with different schemas make a virtual base with none (as the engine's).
      states.set(id, { state: merged, tight: stateOf(acc).tight === stateOf(next).tight ? stateOf(acc).tight : undefined });
      acc = id;
    }
    return stateOf(acc);
  }

  /** The result of merging `source` into `into`: an outcome with the target's new state, or 'conflicts'. */
  mergeOutcomes(source: string, into: string, strategy?: 'source' | 'target'): MergeOutcome[] {
    const s = this.branches.get(source) as number;
    const t = this.branches.get(into) as number;
    if (this.ancestors(t).has(s)) return [{ outcome: 'already_up_to_date' }];
    if (this.ancestors(s).has(t)) return [{ outcome: 'fast_forward', state: new Map(this.state(source)), tight: this.tight(source) }];
    const base = this.baseState(s, t, new Map(), new Map());
    if (base === undefined) return [{ outcome: 'conflicts' }];
    // The merged schema: the side that changed it since the base (the engine refuses when both did).
    const [st, tt] = [this.tight(source), this.tight(into)];
    let tight: boolean;
    if (st === tt || st === base.tight) tight = tt;
    else if (tt === base.tight) tight = st;
    else return [{ outcome: 'schema_incompatible' }];
    const merged = mergeStates(base.state, this.state(source), this.state(into), strategy ?? 'fail');
    // A head never breaks its own schema: rows the tight schema refuses are conflicts.
    if (merged === undefined || (tight && [...merged.values()].some(breaksTight))) return [{ outcome: 'conflicts' }];
    return [{ outcome: 'merged', state: merged, tight }];
  }

  applyMerge(source: string, into: string, state: State, tight = this.tight(into)): void {
    this.commit(into, state, [this.branches.get(into) as number, this.branches.get(source) as number], tight);
  }
}

/**
 * A value the common ancestors disagree on, kept in a virtual base as Git keeps conflict markers:
 * it equals nothing, not even another marker, so the outer sides decide it.
 */
class Marker {}
const marked = (v: unknown): boolean => v instanceof Marker;
const rowMarked = (r: Row | null): boolean => r !== null && Object.values(r).some(marked);
const valueEq = (a: unknown, b: unknown): boolean => !marked(a) && !marked(b) && eq(a, b);
const rowEq = (a: Row | null, b: Row | null): boolean => !rowMarked(a) && !rowMarked(b) && eq(a, b);

/**
 * Three-way merge of whole states. A conflict makes it undefined (`fail`), a marked value (`mark`, a
 * virtual base), or the named side's value (a strategy: per property, or the whole row for a row conflict).
 */
function mergeStates(
  base: State,
  source: State,
  target: State,
  onConflict: 'fail' | 'mark' | 'source' | 'target' = 'fail',
): State | undefined {
  const out = new Map<string, Row>();
  for (const key of new Set([...base.keys(), ...source.keys(), ...target.keys()])) {
    const b = base.get(key) ?? null;
    const s = source.get(key) ?? null;
    const t = target.get(key) ?? null;
    let r: Row | null;
    if (rowEq(s, b)) r = t;
    else if (rowEq(t, b) || rowEq(s, t)) r = s;
    else if (b === null || s === null || t === null) {
      if (onConflict === 'fail') return undefined;
      if (onConflict === 'source' || onConflict === 'target') r = onConflict === 'source' ? s : t;
      else {
        // A row conflict marks every property either side has.
        r = { ...(t ?? s) };
        for (const p of new Set([...Object.keys(s ?? {}), ...Object.keys(t ?? {})])) r[p] = new Marker();
      }
    } else {
      r = {};
      for (const p of new Set([...Object.keys(b), ...Object.keys(s), ...Object.keys(t)])) {
        if (valueEq(s[p], b[p])) r[p] = t[p] ?? null;
        else if (valueEq(t[p], b[p]) || valueEq(s[p], t[p])) r[p] = s[p] ?? null;
        else if (onConflict === 'fail') return undefined;
        else r[p] = onConflict === 'mark' ? new Marker() : ((onConflict === 'source' ? s : t)[p] ?? null);
      }
    }
    if (r !== null) out.set(key, r);
  }
  return out;
}
