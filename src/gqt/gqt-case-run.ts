/**
 * What one case's replay carries from step to step (the driver and the
 * commits its labels captured), the failure of an expectation, and the
 * readable diff of rows that a failed table expectation shows.
 */
import { canonicalJson } from '../model/canonical.js';
import { isBranchgraphError } from '../model/errors.js';
import type { Row } from '../model/values.js';
import type { GqtDriver } from './api-driver.js';
import type { DriverRef } from './gqt-driver.js';
import type { CaseRef } from './gqt-case.js';

/** An expectation a step did not meet: the case fails with this message. */
export class Expectation extends Error {}

/** One case's replay: its driver, the commits its labels captured, and how its refs resolve. */
export class CaseRun {
  readonly labels = new Map<string, string>();
  /** The ids of the merge requests the case opened, by the names it gave them. */
  readonly requests = new Map<string, string>();

  constructor(readonly driver: GqtDriver) {}

  ref(r: CaseRef): DriverRef {
    const base =
      'label' in r
        ? { commit: this.labels.get(r.label) as string }
        : 'tag' in r
          ? { tag: r.tag }
          : 'remote' in r
            ? { remote: r.remote }
            : { branch: r.branch };
    return r.steps === undefined ? base : { ...base, steps: r.steps };
  }

  /** Run `fn`; with a code, it must fail with exactly that code. */
  async expectError(code: string | undefined, fn: () => Promise<unknown>): Promise<void> {
    if (code === undefined) {
      await fn();
      return;
    }
    try {
      await fn();
    } catch (e) {
      if (isBranchgraphError(e) && e.code === code) return;
      throw new Expectation(`expected error ${code}, got ${isBranchgraphError(e) ? e.code : String(e)}: ${(e as Error).message}`);
    }
    throw new Expectation(`expected error ${code}, but the step succeeded`);
  }
}

/** A readable diff of expected against actual rows, matched by entity key. */
export function diffRows(expected: Row[], actual: { key: string; row: Row }[], keyOf: (row: Row) => string): string | undefined {
  const exp = new Map(expected.map((r) => [keyOf(r), r]));
  const act = new Map(actual.map((r) => [r.key, r.row]));
  const lines: string[] = [];
  for (const [k, r] of exp) {
    const a = act.get(k);
    if (a === undefined) lines.push(`  missing row ${k}: ${canonicalJson(r)}`);
    else {
      const props = [...new Set([...Object.keys(r), ...Object.keys(a)])].sort();
      const changed = props.filter((p) => canonicalJson(r[p] ?? null) !== canonicalJson(a[p] ?? null));
      if (changed.length > 0)
        lines.push(
          `  row ${k}: ${changed.map((p) => `${p} expected ${canonicalJson(r[p] ?? null)}, got ${canonicalJson(a[p] ?? null)}`).join('; ')}`,
        );
    }
  }
  for (const [k, a] of act) if (!exp.has(k)) lines.push(`  extra row ${k}: ${canonicalJson(a)}`);
  return lines.length > 0 ? lines.join('\n') : undefined;
}
