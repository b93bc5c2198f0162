/** How the protection and merge request steps run, and what `expect request` compares. */
import { canonicalJson } from '../model/canonical.js';
import type { RequestChecks, Step } from './gqt-case.js';
import { Expectation, type CaseRun } from './gqt-case-run.js';
import type { RequestView } from './gqt-driver.js';

type StepOf<K extends Step['kind']> = Extract<Step, { kind: K }>;

export function protect(run: CaseRun, step: StepOf<'protect'>): Promise<void> {
  return run.expectError(step.error, () => run.driver.protect(step.branch, step.rule));
}

export async function request(run: CaseRun, step: StepOf<'request'>): Promise<void> {
  const { kind: _k, line: _l, name, error, ...action } = step;
  const id = run.requests.get(name);
  if (action.action !== 'open' && id === undefined) throw new Expectation(`no request was opened as ${name}`);
  await run.expectError(error, async () => {
    const r = await run.driver.request({ ...action, ...(id !== undefined ? { id } : {}), title: name });
    if (action.action === 'open') run.requests.set(name, r.view.id);
    if (action.action === 'merge' && action.expect !== undefined && r.outcome !== action.expect)
      throw new Expectation(`request ${name} merged as ${r.outcome}; expected ${action.expect}`);
  });
}

function seen(view: RequestView): RequestChecks {
  const latest = view.revisions.at(-1);
  return {
    state: view.state,
    revisions: view.revisions.length,
    ...(latest !== undefined ? { preview: { outcome: latest.preview.outcome, conflicts: latest.preview.conflicts } } : {}),
    mergeable: view.mergeability.mergeable,
    reasons: view.mergeability.reasons,
  };
}

export async function expectRequest(run: CaseRun, step: StepOf<'expect-request'>): Promise<void> {
  const id = run.requests.get(step.name);
  if (id === undefined) throw new Expectation(`no request was opened as ${step.name}`);
  const got = seen((await run.driver.request({ action: 'get', id })).view);
  const want = step.checks;
  const differs = (Object.keys(want) as (keyof RequestChecks)[]).filter((k) => canonicalJson(want[k]) !== canonicalJson(got[k]));
  if (differs.length > 0)
    throw new Expectation(
      `request ${step.name} differs in ${differs.join(', ')}:\n  expected ${canonicalJson(want)}\n  got      ${canonicalJson(got)}`,
    );
}
