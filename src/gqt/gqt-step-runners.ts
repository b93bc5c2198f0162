/**
 * How each kind of GQT step runs against a driver and what it checks: one
 * runner per step kind, so the runner loop (gqt-runner.ts) is the same for
 * every kind and a new statement adds one entry here.
 */
import { clone, fetchRemote, push, remoteAdd } from './gqt-remote-runners.js';
import { canonicalJson } from '../model/canonical.js';
import { BranchgraphError, type PublicErrorCode } from '../model/errors.js';
import { parseSchema } from '../model/schema-parser.js';
import { findType } from '../model/schema.js';
import { entityKey, type Row } from '../model/values.js';
import type { MergeInput } from '../service/api.js';
import type { MergeResultDto } from '../service/dtos.js';
import { refString } from './gqt-driver.js';
import type { ExpectedConflict, Step } from './gqt-case.js';
import { diffRows, Expectation, type CaseRun } from './gqt-case-run.js';
import { expectBlame, expectHistory, expectLog, expectSearch, reset } from './gqt-history-runners.js';
import { expectRequest, protect, request } from './gqt-request-runners.js';

/** The step of one kind (write and ingest share one shape). */
type StepOf<K extends Step['kind']> = Step extends infer S ? (S extends { kind: infer SK } ? (K extends SK ? S : never) : never) : never;
type Runners = { [K in Step['kind']]: (run: CaseRun, step: StepOf<K>) => Promise<void> };

function sortConflicts(cs: ExpectedConflict[]): ExpectedConflict[] {
  const k = (c: ExpectedConflict) => [c.table, c.key, c.kind, c.property ?? ''].join('\u0000');
  return [...cs].sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
}

async function expectTable(run: CaseRun, step: StepOf<'expect-table'>): Promise<void> {
  const at = run.ref(step.at);
  const schema = parseSchema(await run.driver.schemaText(at));
  const type = findType(schema, step.table);
  if (type === undefined) throw new Expectation(`table ${step.table} does not exist at ${JSON.stringify(at)}`);
  const actual = (await run.driver.rows(step.table, at)) as { key: string; row: Row }[];
  const d = diffRows(step.rows as Row[], actual, (r) => entityKey(type, r));
  if (d !== undefined) throw new Expectation(`table ${step.table} at ${refString(at)} differs:\n${d}`);
}

async function expectDiff(run: CaseRun, step: StepOf<'expect-diff'>): Promise<void> {
  const d = await run.driver.diff(run.ref(step.from), run.ref(step.to), step.threeDot ? 'three-dot' : 'two-dot');
  const line = (c: string, table: string, key: string): string => `${c} ${table} ${key}`;
  const got = d.tables
    .flatMap((t) => [
      ...t.inserted.map((r) => line('+', t.table, r.key)),
      ...t.updated.map((r) => line('~', t.table, r.key)),
      ...t.deleted.map((r) => line('-', t.table, r.key)),
    ])
    .sort();
  const want = step.changes.map((c) => line(c.change, c.table, c.key)).sort();
  if (canonicalJson(got) !== canonicalJson(want))
    throw new Expectation(`diff differs:\n  expected\n    ${want.join('\n    ')}\n  got\n    ${got.join('\n    ')}`);
}

async function merge(run: CaseRun, step: StepOf<'merge'>): Promise<void> {
  const { labels, driver } = run;
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
  const { apply } = step;
  const go = (): Promise<MergeResultDto> => {
    if (apply === undefined) return driver.merge(step.source, input);
    const { into: _into, deleteBranch: _d, width: _w, expectedSourceHead: _s, ...rest } = input;
    return driver.applyCommit(apply, step.into, { ...rest, commit: labels.get(step.source) as string });
  };
  if (step.expect.kind === 'error') return run.expectError(step.expect.code, go);
  checkMerge(step, await go());
}

function checkMerge(step: StepOf<'merge'>, r: MergeResultDto): void {
  const exp = step.expect;
  if (exp.kind === 'outcome') {
    if (r.status !== 'success') {
      throw new Expectation(
        `expected ${exp.outcome}, got conflicts:\n${r.report.items.map((x) => `  ${x.kind} ${x.table} ${x.key} ${x.property ?? ''}`).join('\n')}`,
      );
    }
    if (r.outcome !== exp.outcome) throw new Expectation(`expected ${exp.outcome}, got ${r.outcome}`);
    if (step.expectReplayed === true && r.replayed !== true)
      throw new Expectation(`expected the stored result of an earlier request (replayed), got a new ${r.outcome}`);
    if (step.expectBranchDeleted !== undefined && r.branchDeleted !== step.expectBranchDeleted) {
      throw new Expectation(
        `expected the source branch ${step.expectBranchDeleted ? 'deleted' : 'kept'}; branchDeleted=${r.branchDeleted} (${r.branchDeleteError ?? ''})`,
      );
    }
    return;
  }
  if (exp.kind !== 'conflicts') return;
  if (r.status !== 'conflicts') throw new Expectation(`expected conflicts, got ${r.outcome}`);
  const got = sortConflicts(r.report.items.map((x) => ({ kind: x.kind, table: x.table, key: x.key, property: x.property })));
  const want = sortConflicts(exp.conflicts);
  const fmt = (xs: ExpectedConflict[]) =>
    xs.map((x) => `    ${x.kind} ${x.table} ${x.key}${x.property ? ` ${x.property}` : ''}`).join('\n');
  if (canonicalJson(got) !== canonicalJson(want)) throw new Expectation(`conflicts differ:\n  expected\n${fmt(want)}\n  got\n${fmt(got)}`);
}

/** A typed document's `data`, compared exactly; `commit:@label` in the document names a labelled commit. */
async function typedStep(run: CaseRun, step: StepOf<'graphql'>): Promise<void> {
  const query = step.query.replace(/commit:@([A-Za-z0-9_-]+)/g, (_m, name: string) => `commit:${run.ref({ label: name }).commit ?? name}`);
  await run.expectError(step.error, async () => {
    const answer = await run.driver.typedGraphql(step.branch, query);
    const first = answer.errors?.[0];
    if (first !== undefined) throw new BranchgraphError((first.extensions?.code ?? 'internal') as PublicErrorCode, first.message);
    if (step.error === undefined && canonicalJson(answer.data) !== canonicalJson(step.expected))
      throw new Expectation(`graphql data differs:\n  expected ${canonicalJson(step.expected)}\n  got      ${canonicalJson(answer.data)}`);
  });
}

export const STEP_RUNNERS: Runners = {
  graphql: typedStep,
  schema: (run, step) => run.expectError(step.error, () => run.driver.applySchema(step.branch, step.text)),
  seed: (run, step) =>
    run.expectError(step.error, () =>
      run.driver.write(
        'main',
        step.rows.map((values) => ({ op: 'insert', table: step.table, values })),
      ),
    ),
  write: (run, step) => run.expectError(step.error, () => run.driver.write(step.branch, step.ops)),
  ingest: (run, step) => run.expectError(step.error, () => run.driver.ingest(step.branch, step.ops)),
  catchup: (run, step) =>
    run.expectError(step.error, () =>
      run.driver.catchUp(step.branch, { maxGenerations: step.maxGenerations, pipeline: step.serial ? false : undefined }),
    ),
  'expect-pending': async (run, step) => {
    const n = await run.driver.pendingGenerations(step.branch);
    if (n !== step.generations) throw new Expectation(`${step.branch} has ${n} pending WAL generations; expected ${step.generations}`);
  },
  'branch-create': (run, step) => run.expectError(step.error, () => run.driver.createBranch(step.name, run.ref(step.from))),
  'tag-create': (run, step) => run.expectError(step.error, () => run.driver.createTag(step.name, run.ref(step.from))),
  'remote-add': remoteAdd,
  fetch: fetchRemote,
  push,
  clone,
  'branch-delete': (run, step) => run.expectError(step.error, () => run.driver.deleteBranch(step.name)),
  label: async (run, step) => {
    run.labels.set(step.name, await run.driver.head(step.branch));
  },
  restart: (run) => run.driver.restart(),
  'expect-head': async (run, step) => {
    const head = await run.driver.head(step.branch);
    const label = run.labels.get(step.label);
    if ((head === label) !== step.same)
      throw new Expectation(
        `head of ${step.branch} is ${head}; expected it ${step.same ? 'to be' : 'not to be'} @${step.label} (${label})`,
      );
  },
  'expect-log': expectLog,
  'expect-history': expectHistory,
  'expect-blame': expectBlame,
  'expect-search': expectSearch,
  reset,
  protect,
  request,
  'expect-request': expectRequest,
  'expect-table': expectTable,
  'expect-diff': expectDiff,
  merge,
};
