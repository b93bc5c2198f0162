/**
 * Replaying a GQT case against a driver and checking every expectation
 * exactly. A case stops at its first failed expectation (later steps depend
 * on the state it assumed); the failure names the file and line and shows a
 * readable diff: missing rows, extra rows, changed properties. Each kind of
 * step has its runner in gqt-step-runners.ts.
 */
import { isBranchgraphError } from '../model/errors.js';
import type { GqtDriver } from './api-driver.js';
import type { GqtCase, Step } from './gqt-case.js';
import { CaseRun, Expectation } from './gqt-case-run.js';
import { STEP_RUNNERS } from './gqt-step-runners.js';

export { diffRows } from './gqt-case-run.js';

export interface CaseResult {
  name: string;
  file: string;
  passed: boolean;
  ms: number;
  failure?: string;
}

export async function runCase(c: GqtCase, driver: GqtDriver): Promise<CaseResult> {
  const started = performance.now();
  const run = new CaseRun(driver);
  let current: Step | undefined;
  try {
    for (const step of c.steps) {
      current = step;
      await (STEP_RUNNERS[step.kind] as (run: CaseRun, step: Step) => Promise<void>)(run, step);
    }
    return { name: c.name, file: c.file, passed: true, ms: performance.now() - started };
  } catch (e) {
    const where = `${c.file}:${current?.line ?? 0}`;
    const msg =
      e instanceof Expectation
        ? e.message
        : `unexpected ${isBranchgraphError(e) ? `error ${e.code}: ${e.message}` : String((e as Error)?.stack ?? e)}`;
    return { name: c.name, file: c.file, passed: false, ms: performance.now() - started, failure: `${where}: ${msg}` };
  }
}
