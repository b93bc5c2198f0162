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
}

const eq = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export class ReferenceModel {
  readonly commits: Commit[] = [];
  readonly branches = new Map<string, number>();

  constructor() {
    this.commits.push({ state: new Map(), parents: [], generation: 1 });
    this.branches.set('main', 0);
  }

  state(branch: string): State {
    return this.commits[this.branches.get(branch) as number]?.state as State;
  }

  clone(): ReferenceModel {
    const m = new ReferenceModel();
    m.commits.length = 0;
    for (const c of this.commits) m.commits.push({ state: new Map(c.state), parents: [...c.parents], generation: c.generation });
    m.branches.clear();
    for (const [k, v] of this.branches) m.branches.set(k, v);
    return m;
  }

  private commit(branch: string, state: State, parents: number[]): void {
    const generation = 1 + Math.max(...parents.map((p) => this.commits[p]?.generation ?? 0));
    this.commits.push({ state, parents, generation });
    this.branches.set(branch, this.commits.length - 1);
  }

  /** Apply upserts/updates/deletes; returns false when nothing changed (no commit). */
  write(branch: string, ops: { op: 'upsert' | 'update' | 'delete'; id: string; a?: number; b?: number }[]): boolean {
    const next = new Map(this.state(branch));
    for (const o of ops) {
      const cur = next.get(o.id);
      if (o.op === 'delete') next.delete(o.id);
      else if (o.op === 'upsert') next.set(o.id, { id: o.id, a: o.a ?? null, b: o.b ?? null });
      else if (cur !== undefined) next.set(o.id, { ...cur, ...(o.a !== undefined ? { a: o.a } : {}), ...(o.b !== undefined ? { b: o.b } : {}) });
      else throw new Error('model: update of a missing row');
    }
    if (eq([...next].sort(), [...this.state(branch)].sort())) return false;
    this.commit(branch, next, [this.branches.get(branch) as number]);
    return true;
  }

  ancestors(c: number): Set<number> {
    const out = new Set<number>();
    const stack = [c];
    while (stack.length > 0) {
      const x = stack.pop() as number;
      if (out.has(x)) continue;
      out.add(x);
      stack.push(...(this.commits[x]?.parents ?? []));
    }
    return out;
  }

  /** Every best common ancestor (the engine picks one of them by its documented rule). */
  bestBases(a: number, b: number): number[] {
    const aa = this.ancestors(a);
    const common = [...this.ancestors(b)].filter((x) => aa.has(x));
    return common.filter((c) => !common.some((d) => d !== c && this.ancestors(d).has(c)));
  }

  /**
   * The possible results of merging `source` into `into`: one per best base.
   * Each is an outcome with the target's new state, or 'conflicts'.
   */
  mergeOutcomes(source: string, into: string): { outcome: 'already_up_to_date' | 'fast_forward' | 'merged' | 'conflicts'; state?: State; base?: number }[] {
    const s = this.branches.get(source) as number;
    const t = this.branches.get(into) as number;
    if (this.ancestors(t).has(s)) return [{ outcome: 'already_up_to_date' }];
    if (this.ancestors(s).has(t)) return [{ outcome: 'fast_forward', state: new Map(this.state(source)) }];
    return this.bestBases(s, t).map((base) => {
      const merged = mergeStates(this.commits[base]?.state as State, this.state(source), this.state(into));
      return merged === undefined ? { outcome: 'conflicts' as const, base } : { outcome: 'merged' as const, state: merged, base };
    });
  }

  applyMerge(source: string, into: string, state: State): void {
    this.commit(into, state, [this.branches.get(into) as number, this.branches.get(source) as number]);
  }
}

function mergeStates(base: State, source: State, target: State): State | undefined {
  const out = new Map<string, Row>();
  for (const key of new Set([...base.keys(), ...source.keys(), ...target.keys()])) {
    const b = base.get(key) ?? null;
    const s = source.get(key) ?? null;
    const t = target.get(key) ?? null;
    let r: Row | null;
    if (eq(s, b)) r = t;
    else if (eq(t, b) || eq(s, t)) r = s;
    else if (b === null || s === null || t === null) return undefined;
    else {
      r = {};
      for (const p of new Set([...Object.keys(b), ...Object.keys(s), ...Object.keys(t)])) {
        if (eq(s[p], b[p])) r[p] = t[p] ?? null;
        else if (eq(t[p], b[p]) || eq(s[p], t[p])) r[p] = s[p] ?? null;
        else return undefined;
      }
    }
    if (r !== null) out.set(key, r);
  }
  return out;
}
