/**
 * Replaying a GQT case against a driver and checking every expectation
 * exactly. A case stops at its first failed expectation (later steps depend
 * on the state it assumed); the failure names the file and line and shows a
 * readable diff: missing rows, extra rows, changed properties.
 */
import { canonicalJson } from '../model/canonical.js';
import { isBranchgraphError } from '../model/errors.js';
import { parseSchema } from '../model/schema-parser.js';
import { findType } from '../model/schema.js';
import { entityKey, type Row } from '../model/values.js';
import type { MergeInput } from '../service/inputs.js';
import type { MergeResultDto } from '../service/service.js';
import { refString, type DriverRef, type GqtDriver } from './gqt-driver.js';
import type { CaseRef, ExpectedConflict, GqtCase, Step } from './gqt-parser.js';

export interface CaseResult {
  name: string;
  file: string;
  passed: boolean;
  ms: number;
  failure?: string;
}

class Expectation extends Error {}

function sortConflicts(cs: ExpectedConflict[]): ExpectedConflict[] {
  const k = (c: ExpectedConflict) => [c.table, c.key, c.kind, c.property ?? ''].join('\u0000');
  return [...cs].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
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
      if (changed.length > 0) lines.push(`  row ${k}: ${changed.map((p) => `${p} expected ${canonicalJson(r[p] ?? null)}, got ${canonicalJson(a[p] ?? null)}`).join('; ')}`);
    }
  }
  for (const [k, a] of act) if (!exp.has(k)) lines.push(`  extra row ${k}: ${canonicalJson(a)}`);
  return lines.length > 0 ? lines.join('\n') : undefined;
}

export async function runCase(c: GqtCase, driver: GqtDriver): Promise<CaseResult> {
  const started = performance.now();
  const labels = new Map<string, string>();
  const ref = (r: CaseRef): DriverRef => ('label' in r ? { commit: labels.get(r.label) as string } : 'tag' in r ? { tag: r.tag } : { branch: r.branch });
  let current: Step | undefined;
  try {
    for (const step of c.steps) {
      current = step;
      await runStep(step);
    }
    return { name: c.name, file: c.file, passed: true, ms: performance.now() - started };
  } catch (e) {
    const where = `${c.file}:${current?.line ?? 0}`;
    const msg = e instanceof Expectation ? e.message : `unexpected ${isBranchgraphError(e) ? `error ${e.code}: ${e.message}` : String((e as Error)?.stack ?? e)}`;
    return { name: c.name, file: c.file, passed: false, ms: performance.now() - started, failure: `${where}: ${msg}` };
  }

  async function expectError(code: string | undefined, fn: () => Promise<unknown>): Promise<void> {
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

  async function runStep(step: Step): Promise<void> {
    switch (step.kind) {
      case 'schema':
        return expectError(step.error, () => driver.applySchema(step.branch, step.text));
      case 'seed':
        return expectError(step.error, () =>
          driver.write(
            'main',
            step.rows.map((values) => ({ op: 'insert', table: step.table, values })),
          ),
        );
      case 'write':
        return expectError(step.error, () => driver.write(step.branch, step.ops));
      case 'ingest':
        return expectError(step.error, () => driver.ingest(step.branch, step.ops));
      case 'catchup':
        return expectError(step.error, () => driver.catchUp(step.branch, { maxGenerations: step.maxGenerations, pipeline: step.serial ? false : undefined }));
      case 'expect-pending': {
        const n = await driver.pendingGenerations(step.branch);
        if (n !== step.generations) throw new Expectation(`${step.branch} has ${n} pending WAL generations; expected ${step.generations}`);
        return;
      }
      case 'branch-create':
        return expectError(step.error, () => driver.createBranch(step.name, ref(step.from)));
      case 'tag-create':
        return expectError(step.error, () => driver.createTag(step.name, ref(step.from)));
      case 'branch-delete':
        return expectError(step.error, () => driver.deleteBranch(step.name));
      case 'label':
        labels.set(step.name, await driver.head(step.branch));
        return;
      case 'restart':
        return driver.restart();
      case 'expect-head': {
        const head = await driver.head(step.branch);
        if ((head === labels.get(step.label)) !== step.same)
          throw new Expectation(`head of ${step.branch} is ${head}; expected it ${step.same ? 'to be' : 'not to be'} @${step.label} (${labels.get(step.label)})`);
        return;
      }
      case 'expect-log': {
        const log = await driver.log(step.branch);
        const got = log.map((l) => `${l.kind} ${l.message}`);
        const ok = log.length === step.entries.length && step.entries.every((e, i) => log[i]?.kind === e.kind && (e.message === undefined || log[i]?.message === e.message));
        if (!ok)
          throw new Expectation(`log of ${step.branch} differs:\n  expected ${step.entries.map((e) => `${e.kind}${e.message ? ` ${e.message}` : ''}`).join(' | ')}\n  got      ${got.join(' | ')}`);
        return;
      }
      case 'expect-table': {
        const at = ref(step.at);
        const schema = parseSchema(await driver.schemaText(at));
        const type = findType(schema, step.table);
        if (type === undefined) throw new Expectation(`table ${step.table} does not exist at ${JSON.stringify(at)}`);
        const actual = (await driver.rows(step.table, at)) as { key: string; row: Row }[];
        const d = diffRows(step.rows as Row[], actual, (r) => entityKey(type, r));
        if (d !== undefined) throw new Expectation(`table ${step.table} at ${refString(at)} differs:\n${d}`);
        return;
      }
      case 'expect-diff': {
        const d = await driver.diff(ref(step.from), ref(step.to), step.threeDot ? 'three-dot' : 'two-dot');
        const line = (c: string, table: string, key: string): string => `${c} ${table} ${key}`;
        const got = d.tables
          .flatMap((t) => [...t.inserted.map((r) => line('+', t.table, r.key)), ...t.updated.map((r) => line('~', t.table, r.key)), ...t.deleted.map((r) => line('-', t.table, r.key))])
          .sort();
        const want = step.changes.map((c) => line(c.change, c.table, c.key)).sort();
        if (canonicalJson(got) !== canonicalJson(want)) throw new Expectation(`diff differs:\n  expected\n    ${want.join('\n    ')}\n  got\n    ${got.join('\n    ')}`);
        return;
      }
      case 'merge': {
        const input: MergeInput = {
          into: step.into,
          dryRun: step.dryRun,
          deleteBranch: step.deleteBranch,
          conflictLimit: 1000,
          ...(step.width !== undefined ? { width: step.width } : {}),
          ...(step.message !== undefined ? { message: step.message } : {}),
          ...(step.resolutions !== undefined ? { resolutions: step.resolutions } : {}),
          ...(step.idempotencyKey !== undefined ? { idempotencyKey: step.idempotencyKey } : {}),
          ...(step.expectSourceHead !== undefined ? { expectedSourceHead: labels.get(step.expectSourceHead) as string } : {}),
          ...(step.expectTargetHead !== undefined ? { expectedTargetHead: labels.get(step.expectTargetHead) as string } : {}),
        };
        const exp = step.expect;
        const { apply } = step;
        const run = (): Promise<MergeResultDto> => {
          if (apply === undefined) return driver.merge(step.source, input);
          const { into: _into, deleteBranch: _d, width: _w, expectedSourceHead: _s, ...rest } = input;
          return driver.applyCommit(apply, step.into, { ...rest, commit: labels.get(step.source) as string });
        };
        if (exp.kind === 'error') return expectError(exp.code, run);
        const r = await run();
        if (exp.kind === 'outcome') {
          if (r.status !== 'success') {
            throw new Expectation(`expected ${exp.outcome}, got conflicts:\n${r.report.items.map((x) => `  ${x.kind} ${x.table} ${x.key} ${x.property ?? ''}`).join('\n')}`);
          }
          if (r.outcome !== exp.outcome) throw new Expectation(`expected ${exp.outcome}, got ${r.outcome}`);
          if (step.expectReplayed === true && r.replayed !== true) throw new Expectation(`expected the stored result of an earlier request (replayed), got a new ${r.outcome}`);
          if (step.expectBranchDeleted !== undefined && r.branchDeleted !== step.expectBranchDeleted) {
            throw new Expectation(`expected the source branch ${step.expectBranchDeleted ? 'deleted' : 'kept'}; branchDeleted=${r.branchDeleted} (${r.branchDeleteError ?? ''})`);
          }
          return;
        }
        if (r.status !== 'conflicts') throw new Expectation(`expected conflicts, got ${r.outcome}`);
        const got = sortConflicts(r.report.items.map((x) => ({ kind: x.kind, table: x.table, key: x.key, property: x.property })));
        const want = sortConflicts(exp.conflicts);
        const fmt = (xs: ExpectedConflict[]) => xs.map((x) => `    ${x.kind} ${x.table} ${x.key}${x.property ? ` ${x.property}` : ''}`).join('\n');
        if (canonicalJson(got) !== canonicalJson(want)) throw new Expectation(`conflicts differ:\n  expected\n${fmt(want)}\n  got\n${fmt(got)}`);
        return;
      }
    }
  }
}
