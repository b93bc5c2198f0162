/** How the reading steps run: the log with filters, an entity's history and blame, each compared line by line, a search's hits, and reset. */
import { refString } from './gqt-driver.js';
import type { Step } from './gqt-case.js';
import { Expectation, type CaseRun } from './gqt-case-run.js';

type StepOf<K extends Step['kind']> = Extract<Step, { kind: K }>;

/** Compare `got` and `want` line lists; a `want` line without a message matches a got line on its first words. */
function compare(what: string, got: { words: string; message: string }[], want: { words: string; message?: string }[]): void {
  const ok =
    got.length === want.length &&
    want.every((w, i) => got[i]?.words === w.words && (w.message === undefined || got[i]?.message === w.message));
  if (ok) return;
  const show = (l: { words: string; message?: string }) => `${l.words}${l.message ? ` ${l.message}` : ''}`;
  throw new Expectation(`${what} differs:\n  expected ${want.map(show).join(' | ')}\n  got      ${got.map(show).join(' | ')}`);
}

export async function expectLog(run: CaseRun, step: StepOf<'expect-log'>): Promise<void> {
  const at = run.ref(step.at);
  const log = await run.driver.log(at, step.query);
  compare(
    `log of ${refString(at)}`,
    log.map((c) => ({ words: c.kind, message: c.message })),
    step.entries.map((e) => ({ words: e.kind, ...(e.message !== undefined ? { message: e.message } : {}) })),
  );
}

export async function expectHistory(run: CaseRun, step: StepOf<'expect-history'>): Promise<void> {
  const at = run.ref(step.at);
  const versions = await run.driver.history({ table: step.table, key: step.key, at, firstParent: step.firstParent });
  compare(
    `history of ${step.table} ${step.key} at ${refString(at)}`,
    versions.map((v) => ({ words: `${v.change} ${v.changed.join(',')}`, message: v.commit.message })),
    step.versions.map((v) => ({ words: `${v.change} ${v.changed.join(',')}`, ...(v.message !== undefined ? { message: v.message } : {}) })),
  );
}

export async function expectBlame(run: CaseRun, step: StepOf<'expect-blame'>): Promise<void> {
  const at = run.ref(step.at);
  const blame = await run.driver.blame({ table: step.table, key: step.key, at });
  compare(
    `blame of ${step.table} ${step.key} at ${refString(at)}`,
    blame.map((p) => ({ words: `${p.property} ${p.commit?.kind ?? '?'}`, message: p.commit?.message ?? '' })),
    step.properties.map((p) => ({ words: `${p.property} ${p.kind}`, ...(p.message !== undefined ? { message: p.message } : {}) })),
  );
}

/** A search's hits in rank order, by key, and by score to 1e-6 where the case gives one. */
export async function expectSearch(run: CaseRun, step: StepOf<'expect-search'>): Promise<void> {
  const at = run.ref(step.at);
  const hits = await run.driver.search({ table: step.table, at, ask: step.ask });
  const ok =
    hits.length === step.hits.length &&
    step.hits.every(
      (w, i) => hits[i]?.key === w.key && (w.score === undefined || Math.abs((hits[i]?.score ?? Number.NaN) - w.score) < 1e-6),
    );
  if (ok) return;
  const show = (h: { key: string; score?: number }) => (h.score === undefined ? h.key : `${h.key} ${h.score.toFixed(6)}`);
  throw new Expectation(
    `search of ${step.table} at ${refString(at)} differs:\n  expected ${step.hits.map(show).join(' | ')}\n  got      ${hits.map(show).join(' | ')}`,
  );
}

export function reset(run: CaseRun, step: StepOf<'reset'>): Promise<void> {
  return run.expectError(step.error, () => run.driver.reset(step.branch, run.ref(step.to)));
}
