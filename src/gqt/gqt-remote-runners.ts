/** How the remote steps run: each one call of the driver, checked against its expectation. */
import type { Step } from './gqt-case.js';
import { Expectation, type CaseRun } from './gqt-case-run.js';

type StepOf<K extends Step['kind']> = Extract<Step, { kind: K }>;

export function remoteAdd(run: CaseRun, step: StepOf<'remote-add'>): Promise<void> {
  return run.expectError(step.error, () => run.driver.addRemote(step.name));
}

export function fetchRemote(run: CaseRun, step: StepOf<'fetch'>): Promise<void> {
  return run.expectError(step.error, async () => {
    const moved = await run.driver.fetch(step.remote, step.prune);
    if (step.moved !== undefined && moved !== step.moved)
      throw new Expectation(`fetch ${step.remote} moved ${moved} tracking refs; expected ${step.moved}`);
  });
}

export function push(run: CaseRun, step: StepOf<'push'>): Promise<void> {
  return run.expectError(step.error, async () => {
    const lease = step.lease === undefined || step.lease === 'none' ? step.lease : run.ref(step.lease);
    const outcome = await run.driver.push({
      remote: step.remote,
      branch: step.branch,
      destination: step.destination,
      ...(lease !== undefined ? { lease } : {}),
    });
    if (step.expect !== undefined && outcome !== step.expect) throw new Expectation(`push answered ${outcome}; expected ${step.expect}`);
  });
}

export function clone(run: CaseRun, step: StepOf<'clone'>): Promise<void> {
  return run.expectError(step.error, () => run.driver.clone(step.remote, step.as));
}
