/**
 * The benchmark harness: `npm run bench -- <merge|history|scale|catchup|growth|review|bulk|query|entity|requests|hooks|forks|merges|large|branchbench|load|writes|remotes|search|start|all> [--quick] [--out DIR] [--store s3]`.
 *
 * Every sample runs in a fresh process on a private copy of a prebuilt
 * fixture. Within a group the arms (baseline first) run in pairs, and the
 * order rotates every round so drift hits every arm alike. The report gives
 * medians, per-pair ratios, store calls by operation, phase times and peak
 * RSS, as a table and as JSON; a headline `ratios` object holds the targets.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { GOALS, goalReport, verdicts } from './goals.js';
import { catchUpFixture, conflictFixture, historyFixture, mergeFixture, scaleFixture, type CatchUpWorkload } from './fixtures.js';

const run = promisify(execFile);

interface Arm {
  variant: string;
  params: Record<string, number | string>;
  fixture: () => Promise<string>;
  mode: 'width1' | 'width4' | 'http' | 'warm' | 'unresolved' | 'resolved' | `catchup-${string}`;
  latencyMs: number;
}

interface Sample {
  ms: number;
  phasesMs: Record<string, number>;
  storeCalls: Record<string, number>;
  bytesRead: number;
  /** A merge's store calls made one after another (src/store/round-trips.ts). */
  roundTrips?: number;
  maxWidth: number;
  peakRssMiB: number;
}

export interface Result {
  matrix: string;
  variant: string;
  params: Record<string, number | string>;
  medianMs: number;
  pairs: number;
  samplesMs: number[];
  /** Per pair: this arm's time over the group baseline's time in the same pair. */
  pairRatios: number[];
  storeCalls: Record<string, number>;
  phasesMs: Record<string, number>;
  bytesRead: number;
  /** The median of the samples' dependent round trips, where they report them. */
  roundTrips?: number;
  maxWidth: number;
  peakRssMiB: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function sample(arm: Arm, fixtureDir: string): Promise<Sample> {
  const { stdout } = await run(
    path.resolve('node_modules/.bin/tsx'),
    [path.resolve('bench/sample.ts'), fixtureDir, arm.mode, String(arm.latencyMs)],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop() as string) as Sample;
}

async function runGroup(a: { matrix: string; arms: Arm[]; pairs: number; label: string }): Promise<Result[]> {
  const { matrix, arms, pairs, label } = a;
  const dirs: string[] = [];
  for (const a of arms) {
    process.stderr.write(`[${matrix} ${label}] building fixture ${a.variant} ...\n`);
    dirs.push(await a.fixture());
  }
  const samples: Sample[][] = arms.map(() => []);
  for (let p = 0; p < pairs; p++) {
    const order = arms.map((_, i) => (i + p) % arms.length);
    for (const i of order) {
      process.stderr.write(`[${matrix} ${label}] round ${p + 1}/${pairs} ${arms[i]?.variant}\n`);
      samples[i]?.push(await sample(arms[i] as Arm, dirs[i] as string));
    }
  }
  const base = samples[0] as Sample[];
  return arms.map((a, i) => {
    const s = samples[i] as Sample[];
    const mid = [...s].sort((x, y) => x.ms - y.ms)[s.length >> 1] as Sample;
    const phases = Object.keys(mid.phasesMs);
    return {
      matrix,
      variant: a.variant,
      params: a.params,
      medianMs: round(median(s.map((x) => x.ms))),
      pairs,
      samplesMs: s.map((x) => round(x.ms)),
      pairRatios: s.map((x, k) => round(x.ms / (base[k] as Sample).ms, 3)),
      storeCalls: mid.storeCalls,
      phasesMs: Object.fromEntries(phases.map((ph) => [ph, round(median(s.map((x) => x.phasesMs[ph] ?? 0)))])),
      bytesRead: mid.bytesRead,
      ...(mid.roundTrips !== undefined ? { roundTrips: median(s.map((x) => x.roundTrips ?? NaN)) } : {}),
      maxWidth: Math.max(...s.map((x) => x.maxWidth)),
      peakRssMiB: Math.max(...s.map((x) => x.peakRssMiB)),
    };
  });
}

function find(results: Result[], variant: string): Result {
  const r = results.find((x) => x.variant === variant);
  if (r === undefined) throw new Error(`no result ${variant}`);
  return r;
}

async function mergeMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const results: Result[] = [];
  const ratios: Record<string, number | boolean> = {};
  for (const touched of [1, 8, 29]) {
    const arm = (mode: Arm['mode']): Arm => ({
      variant: `${mode}-t${touched}`,
      params: { touched, latencyMs: 17, tables: 121 },
      fixture: () => mergeFixture(touched),
      mode,
      latencyMs: 17,
    });
    const group = await runGroup({
      matrix: 'merge',
      arms: [arm('width1'), arm('width4'), arm('http'), ...(touched === 1 ? [arm('warm')] : [])],
      pairs: quick ? 2 : 5,
      label: `touched=${touched}`,
    });
    results.push(...group);
    const [w1, w4, http] = [find(group, `width1-t${touched}`), find(group, `width4-t${touched}`), find(group, `http-t${touched}`)];
    ratios[`width4_speedup_t${touched}`] = round(w1.medianMs / w4.medianMs, 3);
    ratios[`width4_speedup_median_pair_t${touched}`] = round(median(w4.pairRatios.map((r) => 1 / r)), 3);
    ratios[`http_over_embedded_t${touched}`] = round(http.medianMs / w1.medianMs, 3);
    ratios[`store_calls_t${touched}`] = w1.storeCalls.total ?? NaN;
    ratios[`store_calls_within_budget_t${touched}`] = (w1.storeCalls.total ?? Infinity) <= 4 * touched + 10;
    // The critical path at 17 ms per call, in a fresh process (and for one table, in a warm one).
    ratios[`dependent_round_trips_t${touched}`] = w1.roundTrips ?? NaN;
    if (touched === 1) ratios.dependent_round_trips_warm_t1 = find(group, 'warm-t1').roundTrips ?? NaN;
  }
  return { results, ratios };
}

/** Merge review: the same 29-table conflicted merge, reported (unresolved) and landed with a strategy (resolved). */
async function reviewMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const touched = 29;
  const arm = (mode: 'unresolved' | 'resolved'): Arm => ({
    variant: `${mode}-t${touched}`,
    params: { touched, latencyMs: 17, tables: 121 },
    fixture: () => conflictFixture(touched),
    mode,
    latencyMs: 17,
  });
  const results = await runGroup({
    matrix: 'review',
    arms: [arm('unresolved'), arm('resolved')],
    pairs: quick ? 3 : 7,
    label: `touched=${touched}`,
  });
  const [unresolved, resolved] = [find(results, `unresolved-t${touched}`), find(results, `resolved-t${touched}`)];
  return {
    results,
    ratios: {
      resolved_over_unresolved_t29: round(resolved.medianMs / unresolved.medianMs, 3),
      resolved_ms_t29: round(resolved.medianMs, 1),
      unresolved_ms_t29: round(unresolved.medianMs, 1),
      resolved_store_calls_t29: resolved.storeCalls.total ?? NaN,
      unresolved_store_calls_t29: unresolved.storeCalls.total ?? NaN,
    },
  };
}

async function historyMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const depths = [0, 16, 64];
  const arms = depths.map(
    (h): Arm => ({
      variant: `h${h}`,
      params: { extraCommits: h, touched: 4, rows: 16, latencyMs: 17 },
      fixture: () => historyFixture(h),
      mode: 'width1',
      latencyMs: 17,
    }),
  );
  const results = await runGroup({ matrix: 'history', arms, pairs: quick ? 2 : 5, label: 'depth' });
  const [h0, h64] = [find(results, 'h0'), find(results, 'h64')];
  return {
    results,
    ratios: {
      h64_over_h0: round(h64.medianMs / h0.medianMs, 3),
      store_calls_h0: h0.storeCalls.total ?? NaN,
      store_calls_h16: find(results, 'h16').storeCalls.total ?? NaN,
      store_calls_h64: h64.storeCalls.total ?? NaN,
      store_calls_equal: results.every((r) => r.storeCalls.total === h0.storeCalls.total),
    },
  };
}

async function scaleMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const large = quick ? 100_000 : 1_000_000;
  const arms = [1000, large].map(
    (rows): Arm => ({
      variant: `rows${rows}`,
      params: { rows, changesPerSide: 1000, latencyMs: 0 },
      fixture: () => scaleFixture(rows),
      mode: 'width1',
      latencyMs: 0,
    }),
  );
  const results = await runGroup({ matrix: 'scale', arms, pairs: quick ? 2 : 5, label: 'rows' });
  const [small, big] = [find(results, 'rows1000'), find(results, `rows${large}`)];
  return {
    results,
    ratios: {
      large_over_small: round(big.medianMs / small.medianMs, 3),
      large_bytes_read: big.bytesRead,
      large_peak_rss_mib: big.peakRssMiB,
    },
  };
}

async function catchUpMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const results: Result[] = [];
  const ratios: Record<string, number | boolean> = {};
  const variants = [
    ['serial', 8],
    ['pipeline', 8],
    ['pipeline', 64],
  ] as const;
  for (const workload of ['unique', 'updates'] as CatchUpWorkload[]) {
    for (const latencyMs of [0, 17]) {
      const arms = variants.map(
        ([mode, cap]): Arm => ({
          variant: `${workload}-l${latencyMs}-${mode}${cap}`,
          params: {
            workload,
            latencyMs,
            shards: 4,
            generations: 32,
            rowsPerGeneration: 8,
            payloadKiB: 8,
            pipeline: mode === 'pipeline' ? 'on' : 'off',
            maxGenerations: cap,
          },
          fixture: () => catchUpFixture(workload),
          mode: `catchup-${mode}-${cap}`,
          latencyMs,
        }),
      );
      const group = await runGroup({ matrix: 'catchup', arms, pairs: quick ? 2 : 5, label: `${workload} latency=${latencyMs}` });
      results.push(...group);
      const [serial8, pipe8, pipe64] = group as [Result, Result, Result];
      ratios[`pipeline64_over_serial8_${workload}_l${latencyMs}`] = round(serial8.medianMs / pipe64.medianMs, 3);
      ratios[`pipeline8_over_serial8_${workload}_l${latencyMs}`] = round(serial8.medianMs / pipe8.medianMs, 3);
      ratios[`generations_per_second_pipeline64_${workload}_l${latencyMs}`] = round(128 / (pipe64.medianMs / 1000), 1);
      ratios[`generations_per_second_serial8_${workload}_l${latencyMs}`] = round(128 / (serial8.medianMs / 1000), 1);
    }
  }
  return { results, ratios };
}

/** One growth or bulk arm in a fresh process (bench/<matrix>.ts); its figures as printed. */
async function scriptArm(
  matrix:
    | 'growth'
    | 'bulk'
    | 'query'
    | 'entity'
    | 'requests'
    | 'hooks'
    | 'forks'
    | 'merges'
    | 'large'
    | 'branchbench'
    | 'load'
    | 'writes'
    | 'remotes'
    | 'search'
    | 'start',
  args: string[],
): Promise<Record<string, number>> {
  process.stderr.write(`[${matrix}] ${args.join(' ')} ...\n`);
  const { stdout } = await run(path.resolve('node_modules/.bin/tsx'), [path.resolve(`bench/${matrix}.ts`), ...args], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop() as string) as Record<string, number>;
}

const growthArm = (args: string[]) => scriptArm('growth', args);

/** Arms run once (growth, bulk) report their own figures as params; the timing fields stay empty. */
function onceResults(matrix: string, arms: [variant: string, figures: Record<string, number>][]): Result[] {
  return arms.map(([variant, r]) => ({
    matrix,
    variant,
    params: r,
    medianMs: NaN,
    pairs: 1,
    samplesMs: [],
    pairRatios: [],
    storeCalls: {},
    phasesMs: {},
    bytesRead: 0,
    maxWidth: 0,
    peakRssMiB: r.peakRssMiB ?? 0,
  }));
}

/**
 * Costs that must not grow with use: repeated writes, branch rounds, wide
 * graphs, concurrent writers. Each arm runs once in a fresh process and
 * compares its own first repetitions with its last, so the figures are
 * ratios within one run; `--quick` shortens the sequences.
 */
async function growthMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const writes = await growthArm(['writes', String(quick ? 2000 : 10_000)]);
  // The same writes with no compactor at all (another process's, an embedded graph): what writes alone bound.
  const alone = await growthArm(['writes', String(quick ? 2000 : 10_000), 'no-compaction']);
  const branches = await growthArm(['branches', String(quick ? 1000 : 5000)]);
  const tables = await growthArm(['tables', '1000']);
  const one = await growthArm(['writers', '1', '17']);
  const eight = await growthArm(['writers', '8', '17']);
  const scaleRows = String(quick ? 100_000 : 1_000_000);
  const compacted = await growthArm(['compacted-merge', scaleRows]);
  const gitScale = await growthArm(['git-scale', scaleRows]);
  const gitBranches = await growthArm(['git-branches', String(quick ? 1000 : 5000)]);
  const names = [
    'writes',
    'writes-no-compactor',
    'branches',
    'tables',
    'writers1',
    'writers8',
    'compacted-merge',
    'git-scale',
    'git-branches',
  ];
  const results = onceResults(
    'growth',
    [writes, alone, branches, tables, one, eight, compacted, gitScale, gitBranches].map((r, i) => [names[i] as string, r]),
  );
  return {
    results,
    ratios: {
      write_bytes_last_over_first: writes.write_bytes_last_over_first as number,
      write_meta_bytes_last_over_first: writes.write_meta_bytes_last_over_first as number,
      storage_bytes_per_row: writes.storage_bytes_per_row as number,
      scan_after_writes_over_fresh: writes.scan_after_writes_over_fresh as number,
      scan_after_writes_over_fresh_median: writes.scan_after_writes_over_fresh_median as number,
      scan_after_writes_over_fresh_l17: writes.scan_after_writes_over_fresh_l17 as number,
      point_read_calls_after_writes: writes.point_read_calls_after_writes as number,
      point_read_calls_after_10_writes: writes.point_read_calls_after_10_writes as number,
      runs_after_writes: writes.runs_after as number,
      scan_after_writes_over_fresh_no_compactor: alone.scan_after_writes_over_fresh as number,
      scan_after_writes_over_fresh_no_compactor_l17: alone.scan_after_writes_over_fresh_l17 as number,
      runs_after_writes_no_compactor: alone.runs_after as number,
      storage_bytes_per_row_no_compactor: alone.storage_bytes_per_row as number,
      merge_last_over_first_branches: branches.merge_last_over_first_branches as number,
      manifest_bytes_last_over_first: branches.manifest_bytes_last_over_first as number,
      write_meta_bytes_1000_tables: tables.write_meta_bytes_1000_tables as number,
      group_commit_8_over_1_l17: round((eight.commits_per_second as number) / (one.commits_per_second as number), 3),
      contention_errors_8: eight.contention_errors as number,
      merge_after_compaction_read_fraction: compacted.merge_after_compaction_read_fraction as number,
      // Git's time for the same merge over ours: above 1, we are faster than the tool users would otherwise script.
      git_over_branchgraph_scale: round((gitScale.git_merge_ms as number) / (compacted.merge_ms as number), 3),
      git_over_branchgraph_branches: round((gitBranches.git_merge_ms_last as number) / (branches.merge_ms_last as number), 3),
      // The same with Git's process spawns subtracted (we are timed in a warm process), both durable.
      git_less_spawns_over_branchgraph_scale: round((gitScale.git_merge_ms_less_spawns as number) / (compacted.merge_ms as number), 3),
      git_less_spawns_over_branchgraph_branches: round(
        (gitBranches.git_merge_ms_last_less_spawns as number) / (branches.merge_ms_last as number),
        3,
      ),
      git_spawn_ms: gitScale.git_spawn_ms as number,
    },
  };
}

/** The preparation budget the engine runs merges under by default (BRANCHGRAPH_PREP_BUDGET_BYTES), in MiB. */
const BUDGET_MIB = 128;

/** Bulk arms run three times, the median process counting (see bulkMatrix). */
const REPEATED_BULK_ARMS = new Set(['merge-small', 'merge-conflict']);

/** The figures of the run whose `key` is the median of three, with every run's `key` beside them (`<key>_samples_<i>`). */
async function medianArm(arm: () => Promise<Record<string, number>>, key: string): Promise<Record<string, number>> {
  const runs: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) runs.push(await arm());
  const byKey = [...runs].sort((a, b) => (a[key] as number) - (b[key] as number));
  const samples = Object.fromEntries(runs.map((r, i) => [`${key}_samples_${i}`, r[key] as number]));
  return { ...(byKey[1] as Record<string, number>), ...samples };
}

/**
 * Work that should cost what changed, on big tables (the proportional-work
 * issue's baseline): an @unique insert, a cascading delete, and merges whose
 * sides are skewed, both big, or all in conflict. Each arm runs in a fresh
 * process on a local directory, once, or three times for the two merges of
 * the conflicts ratio (REPEATED_BULK_ARMS).
 */
async function bulkMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const n = quick ? 100_000 : 400_000;
  const arms: [string, string[]][] = [
    ['unique', ['unique', String(n), '1']],
    ['plain', ['unique', String(n), '0']],
    ['cascade', ['cascade', String(n)]],
    ['merge-small', ['merge', String(n), 'small']],
    ['merge-skewed', ['merge', String(n), 'skewed']],
    ['merge-both', ['merge', String(quick ? 100_000 : 400_000), 'both']],
    ['merge-conflict', ['merge', String(n), 'conflict']],
    ['git-skewed', ['git', String(n), 'skewed']],
    ['git-both', ['git', String(n), 'both']],
  ];
  const figures: Record<string, Record<string, number>> = {};
  // The conflicts ratio divides by a merge of about 50 ms, whose single samples swing by a third
  // between cold processes: both of its arms run three times, and the median process counts.
  for (const [name, args] of arms)
    figures[name] = REPEATED_BULK_ARMS.has(name)
      ? await medianArm(() => scriptArm('bulk', args), 'merge_ms')
      : await scriptArm('bulk', args);
  const f = (arm: string, key: string): number => figures[arm]?.[key] as number;
  const results = onceResults(
    'bulk',
    arms.map(([name]) => [name, figures[name] as Record<string, number>]),
  );
  const size = quick ? '100k' : '400k';
  return {
    results,
    ratios: {
      [`unique_insert_${size}_over_plain`]: round(f('unique', 'insert_ms') / f('plain', 'insert_ms'), 3),
      [`cascade_delete_${size}_over_insert`]: round(f('cascade', 'delete_ms') / f('cascade', 'insert_ms'), 3),
      skewed_merge_over_small_merge: round(f('merge-skewed', 'merge_ms') / f('merge-small', 'merge_ms'), 3),
      both_big_rows_per_second: Math.round(f('merge-both', 'changed') / (f('merge-both', 'merge_ms') / 1000)),
      [`conflicts_${size}_first_page_ms_over_small_merge`]: round(f('merge-conflict', 'merge_ms') / f('merge-small', 'merge_ms'), 3),
      peak_rss_over_budget_mib: round(
        Math.max(...arms.filter(([name]) => !name.startsWith('git')).map(([name]) => f(name, 'peakRssMiB'))) - BUDGET_MIB,
        1,
      ),
      // Git's time for the same merge over ours: above 1, we are faster than the tool users would otherwise script.
      git_over_branchgraph_skewed: round(f('git-skewed', 'git_merge_ms') / f('merge-skewed', 'merge_ms'), 3),
      git_over_branchgraph_both: round(f('git-both', 'git_merge_ms') / f('merge-both', 'merge_ms'), 3),
      // The same with Git's three process spawns subtracted (we are timed in a warm process), both durable.
      git_less_spawns_over_branchgraph_skewed: round(f('git-skewed', 'git_merge_ms_less_spawns') / f('merge-skewed', 'merge_ms'), 3),
      git_less_spawns_over_branchgraph_both: round(f('git-both', 'git_merge_ms_less_spawns') / f('merge-both', 'merge_ms'), 3),
      git_spawn_ms: f('git-skewed', 'git_spawn_ms'),
    },
  };
}

/**
 * Entity history and blame at 100 commits and at 10,000 (2,000 with --quick), ten of them touching
 * the entity, each beside the walk of every commit that history was read by before runs recorded
 * their origin (bench/entity.ts): store calls and time on a cold server.
 */
async function entityMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const large = quick ? 2000 : 10_000;
  const small = await scriptArm('entity', ['100', '10']);
  const big = await scriptArm('entity', [String(large), '10']);
  const f = (r: Record<string, number>, k: string): number => r[k] as number;
  return {
    results: onceResults('entity', [
      ['c100', small],
      [`c${large}`, big],
    ]),
    ratios: {
      [`history_calls_c${large}`]: f(big, 'history_calls'),
      history_calls_c100: f(small, 'history_calls'),
      [`history_ms_c${large}`]: f(big, 'history_ms'),
      history_ms_c100: f(small, 'history_ms'),
      [`history_calls_c${large}_over_c100`]: round(f(big, 'history_calls') / f(small, 'history_calls'), 2),
      [`blame_calls_c${large}`]: f(big, 'blame_calls'),
      [`every_commit_calls_c${large}`]: f(big, 'every_commit_calls'),
      [`every_commit_ms_c${large}`]: f(big, 'every_commit_ms'),
      [`every_commit_over_history_calls_c${large}`]: round(f(big, 'every_commit_calls') / f(big, 'history_calls'), 1),
      versions_agree: f(big, 'history_versions') === f(big, 'every_commit_versions') && f(big, 'history_versions') === 10,
    },
  };
}

/** A matrix of one script arm run once: its figures as the result's params, and `keys` of them as the ratios. */
function pickedFigures(matrix: string, r: Record<string, number>, keys: string[]): { results: Result[]; ratios: Record<string, number> } {
  return { results: onceResults(matrix, [['l17', r]]), ratios: Object.fromEntries(keys.map((k) => [k, r[k] as number])) };
}

/** What a merge request adds to a merge (bench/requests.ts): the same change merged directly and through a request, 17 ms per store call. */
async function requestsMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('requests', [quick ? '3' : '7', '17', '100']);
  const keys = [
    'plain_merge_calls',
    'plain_merge_ms',
    'request_calls',
    'request_ms',
    'request_open_calls',
    'request_review_calls',
    'request_merge_calls',
    'request_over_plain_ms',
    'request_merge_step_over_plain_calls',
  ];
  return pickedFigures('requests', r, keys);
}

/** What webhooks cost a write and how fast they arrive (bench/hooks.ts): 0, 1 and 4 hooks in turns, 17 ms per store call. */
async function hooksMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('hooks', quick ? ['3', '10', '17', '100'] : ['8', '10', '17', '400']);
  const keys = [
    'write_p50_ms_0_hooks',
    'write_p50_ms_1_hook',
    'write_p50_ms_4_hooks',
    'write_p50_4_hooks_over_0',
    'write_calls_0_hooks',
    'write_calls_4_hooks',
    'delivery_p50_ms',
    'delivery_p95_ms',
    'burst_deliveries_per_second',
  ];
  return pickedFigures('hooks', r, keys);
}

/**
 * Deep forks (bench/forks.ts): cold reads on a branch forked 64 levels deep against main, and branch
 * creation among 10,000 branches against 10 (quick: 10,000 rows and 1,000 branches), 17 ms per store call.
 */
async function forksMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const branches = quick ? 1000 : 10_000;
  const r = await scriptArm('forks', ['64', quick ? '10000' : '100000', String(branches), '17', quick ? '3' : '5']);
  const keys = [
    'read_deep_over_main_scan',
    'read_deep_over_main_point',
    'scan_main_calls',
    'scan_deep_calls',
    'point_main_calls',
    'point_deep_calls',
    `branch_create_at_${branches}_over_at_10`,
    `branch_create_calls_at_${branches}`,
  ];
  const picked = pickedFigures('forks', r, keys);
  picked.ratios.read_deep_over_main = Math.max(r.read_deep_over_main_scan as number, r.read_deep_over_main_point as number);
  return picked;
}

/**
 * A big graph, a small change (bench/large.ts): 18 tables of 10,000,000 rows in all (quick:
 * 1,000,000) with @unique properties, edges and 300 commits of history, against the same graph
 * at a hundredth of the size; 100 updates per side, merged in a cold process.
 */
async function largeMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('large', [quick ? '1000000' : '10000000', quick ? '5' : '7', '300']);
  const keys = [
    'large_over_small',
    'merge_p50_ms',
    'merge_p95_ms',
    'small_merge_p50_ms',
    'bytes_read_over_changed_bytes',
    'store_calls',
    'small_store_calls',
    'peak_rss_mib',
    'cold_open_ms',
    'load_rows_per_second',
  ];
  const picked = pickedFigures('large', r, keys);
  return { ...picked, results: onceResults('large', [[process.env.BENCH_STORE === 's3' ? 's3' : 'fs', r]]) };
}

/**
 * BranchBench's operations (bench/branchbench.ts) on a CH-benCHmark item table of 100,000 rows
 * (quick: 10,000), embedded, over HTTP and on PostgreSQL with a database per branch; read latency
 * against branch depth; and what an MCP tool call costs over the REST call it wraps.
 */
async function branchbenchMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('branchbench', [quick ? '10000' : '100000']);
  const ops = ['create', 'connect', 'first_query', 'point_read', 'range_read', 'insert', 'update', 'range_update'];
  const keys = [
    ...ops.map((op) => `${op}_ms`),
    ...ops.flatMap((op) => [`http_${op}_ms`, `postgres_${op}_ms`, `embedded_${op}_calls`]),
    'postgres_over_branchgraph_create',
    'postgres_over_branchgraph_point_read',
    'postgres_over_branchgraph_insert',
    'read_depth_1024_over_1',
    ...[1, 16, 256, 1024].map((d) => `point_read_ms_depth_${d}`),
    'rest_point_read_ms',
    'tool_point_read_ms',
    'rest_point_read_calls',
    'tool_point_read_calls',
    'rest_write_ms',
    'tool_write_ms',
    'rest_write_calls',
    'tool_write_calls',
    'tool_over_rest_point_read',
    'tool_over_rest_write',
  ];
  return pickedFigures('branchbench', r, keys);
}

/**
 * The load peer experiment (bench/load.ts): 1,000,000 rows (quick: 200,000) with a primary key and a
 * unique email, loaded into branchgraph (CSV and NDJSON, a fresh process each) and into PostgreSQL
 * (COPY and 1,000-row INSERT batches), alternating, three rounds (quick: two), both durable.
 */
async function loadMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('load', [quick ? '200000' : '1000000', quick ? '2' : '3']);
  const keys = [
    'rows',
    'csv_ms',
    'ndjson_ms',
    'copy_ms',
    'insert_ms',
    'rows_per_second',
    'ndjson_rows_per_second',
    'copy_rows_per_second',
    'insert_rows_per_second',
    'copy_over_branchgraph',
    'insert_over_branchgraph',
    'copy_over_branchgraph_ndjson',
    'peak_rss_mib',
    'rss_before_load_mib',
    'ndjson_peak_rss_mib',
    'bytes_on_disk',
    'postgres_bytes_on_disk',
  ];
  return pickedFigures('load', r, keys);
}

/**
 * Small writes beside PostgreSQL's INSERT (bench/writes.ts): one-row and 100-row writes, each a
 * durable commit, local and at 17 ms per store call, against one prepared INSERT statement each,
 * alternating, 100 samples a side (quick: 40) after a warm-up.
 */
async function writesMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('writes', [quick ? '40' : '100']);
  return pickedFigures('writes', r, Object.keys(r));
}

/**
 * Remotes (bench/remotes.ts): the `large` fixture (1,000,000 rows in 18 tables; quick: 100,000)
 * cloned from the S3 server into a directory beside `rclone copy` of the same prefix; a fetch after
 * 100 rows changed; a fetch's store calls at 0 and 64 commits of history; a push of 100 rows to a
 * server at 17 ms per store call. Needs the S3 server (scripts/s3-start.sh) and Debian's rclone.
 */
async function remotesMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  if (!process.env.S3_ENDPOINT)
    throw new Error('the remotes matrix needs an S3 server: bash scripts/s3-start.sh DIR, then source DIR/s3.env');
  const r = await scriptArm('remotes', [quick ? '100000' : '1000000', quick ? '2' : '3']);
  const keys = [
    'clone_ms',
    'rclone_ms',
    'clone_mib_per_s',
    'rclone_mib_per_s',
    'clone_over_rclone_throughput',
    'fetch_bytes',
    'new_object_bytes',
    'fetch_bytes_over_new_object_bytes',
    'fetch_store_calls_h0',
    'fetch_store_calls_h64',
    'fetch_store_calls_h64_over_h0',
    'push_round_trips',
    'push_ms',
  ];
  return pickedFigures('remotes', r, keys);
}

/**
 * Search (bench/search.ts): Debian's package descriptions (all 63,697 listed here; quick: 10,000)
 * with 384-dimensional local embeddings, searched by branchgraph, SQLite FTS5 and LanceDB side by
 * side; recall@10, search on a branch right after a merge over search on main, what an index costs.
 */
async function searchMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('search', [quick ? '10000' : '63697']);
  const keys = [
    'fts5_over_branchgraph_text_p50',
    'lancedb_over_branchgraph_vector_p50',
    'lancedb_over_branchgraph_text_p50',
    'recall_at_10',
    'branch_after_merge_over_main',
    'build_seconds',
    'fts5_build_seconds',
    'lancedb_build_seconds',
    'branchgraph_text_p50_ms',
    'branchgraph_text_p95_ms',
    'fts5_text_p50_ms',
    'fts5_text_p95_ms',
    'lancedb_text_p50_ms',
    'lancedb_text_p95_ms',
    'branchgraph_vector_p50_ms',
    'branchgraph_vector_p95_ms',
    'lancedb_vector_p50_ms',
    'lancedb_vector_p95_ms',
    'store_calls_cold_search',
    'store_calls_warm_search',
    'run_bytes_per_row',
    'segment_bytes_per_row',
    'write_p50_ms_plain',
    'write_p50_ms_search',
    'write_p50_ms_search_embed',
  ];
  return { ...pickedFigures('search', r, keys), results: onceResults('search', [['package-descriptions', r]]) };
}

/**
 * The first minutes (bench/start.ts): the installed command line's start for `--version` and an
 * embedded read, the demo's load, and the explorer's first paint on the sample graph.
 */
async function startMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const r = await scriptArm('start', [quick ? '5' : '15']);
  const keys = [
    'version_ms_p50',
    'version_ms_p95',
    'embedded_read_ms_p50',
    'embedded_read_ms_p95',
    'version_ms_p50_node24',
    'version_ms_p95_node24',
    'embedded_read_ms_p50_node24',
    'embedded_read_ms_p95_node24',
    'demo_load_seconds',
    'demo_store_mib',
    'explorer_first_paint_ms',
    'explorer_tables_shown_ms',
  ];
  return { ...pickedFigures('start', r, keys), results: onceResults('start', [['sample-graph', r]]) };
}

/**
 * Many mergers into one branch (bench/merges.ts), 17 ms per store call: one client merging its
 * branches one after another, eight clients at once in one process, eight split over two server
 * processes on one store (merging through their HTTP servers, which forward to the branch's
 * publisher), the same eight over two embedded processes racing at the store, sixteen in one
 * process, and one client through one server (what the two servers' figure is compared with), in
 * rotating order; medians over the rounds. Every merge's result is checked exact by the script.
 */
async function mergesMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const rounds = quick ? 1 : 3;
  const perClient = quick ? 6 : 12;
  const arms: [variant: string, args: string[]][] = [
    ['clients1', ['1', String(perClient * 2), '17', '1']],
    ['clients8', ['8', String(perClient), '17', '1']],
    ['clients8-2proc', ['8', String(perClient), '17', '2', 'servers']],
    ['clients16', ['16', String(perClient), '17', '1']],
    ['clients8-2proc-racing', ['8', String(perClient), '17', '2']],
    ['clients1-server', ['1', String(perClient * 2), '17', '1', 'servers']],
  ];
  const runs: Record<string, Record<string, number>[]> = Object.fromEntries(arms.map(([v]) => [v, []]));
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < arms.length; i++) {
      const [variant, args] = arms[(i + r) % arms.length] as [string, string[]];
      runs[variant]?.push(await scriptArm('merges', args));
    }
  // Per arm, the round with the median throughput, whole (its errors and exactness with it).
  const pick = (variant: string): Record<string, number> => {
    const xs = [...(runs[variant] ?? [])].sort((a, b) => (a.merges_per_second as number) - (b.merges_per_second as number));
    return xs[xs.length >> 1] as Record<string, number>;
  };
  const [one, eight, two, sixteen, racing, oneServer] = arms.map(([v]) => pick(v)) as Record<string, number>[] as [
    Record<string, number>,
    Record<string, number>,
    Record<string, number>,
    Record<string, number>,
    Record<string, number>,
    Record<string, number>,
  ];
  const all = Object.values(runs).flat();
  return {
    results: onceResults('merges', [
      ['clients1', one],
      ['clients8', eight],
      ['clients8-2proc', two],
      ['clients16', sixteen],
      ['clients8-2proc-racing', racing],
      ['clients1-server', oneServer],
    ]),
    ratios: {
      merges_per_second_1_l17: one.merges_per_second as number,
      merges_per_second_8_l17: eight.merges_per_second as number,
      merges_8_over_1_l17: round((eight.merges_per_second as number) / (one.merges_per_second as number), 3),
      merge_errors_8: Math.max(...(runs.clients8 ?? []).map((x) => x.contention_errors as number)),
      merges_per_second_8_l17_2proc: two.merges_per_second as number,
      // Like with like: eight clients through two servers over one client through one server.
      merges_8_over_1_l17_2proc: round((two.merges_per_second as number) / (oneServer.merges_per_second as number), 3),
      merges_per_second_1_l17_server: oneServer.merges_per_second as number,
      merge_errors_8_2proc: Math.max(...(runs['clients8-2proc'] ?? []).map((x) => x.contention_errors as number)),
      merges_8_over_1_l17_2proc_racing: round((racing.merges_per_second as number) / (one.merges_per_second as number), 3),
      merges_per_second_16_l17: sixteen.merges_per_second as number,
      merge_errors_16: Math.max(...(runs.clients16 ?? []).map((x) => x.contention_errors as number)),
      store_calls_per_merge_1: one.store_calls_per_merge as number,
      store_calls_per_merge_8: eight.store_calls_per_merge as number,
      every_merge_exact: all.every((x) => x.exact === 1 && x.errors === 0),
    },
  };
}

/**
 * The typed GraphQL API against PostGraphile 5 over PostgreSQL, the same operations over HTTP on
 * the same data (bench/query.ts): each ratio is PostGraphile's p50 over ours (above 1, we are faster).
 */
async function queryMatrix(quick: boolean): Promise<{ results: Result[]; ratios: Record<string, number | boolean> }> {
  const f = await scriptArm('query', [String(quick ? 10_000 : 100_000), String(quick ? 60 : 100)]);
  const ratio = (op: string) => round((f[`${op}_peer_p50`] as number) / (f[`${op}_ours_p50`] as number), 3);
  const ops = ['by_key', 'filtered_page', 'two_hop', 'in_edges', 'mutation_batch'];
  // Each arm's tail over its median, ours with a goal of its own (≤ 2) and PostGraphile's beside it.
  const tails = Object.fromEntries(
    ops.flatMap((op) =>
      (['ours', 'peer'] as const).map((arm) => [
        `${arm === 'ours' ? 'ours' : 'postgraphile'}_p95_over_p50_${op}`,
        round((f[`${op}_${arm}_p95`] as number) / (f[`${op}_${arm}_p50`] as number), 3),
      ]),
    ),
  );
  const levels = Object.keys(f).filter((k) => /^two_hop_cold_level\d+_store_calls$/.test(k));
  return {
    results: onceResults('query', [['query', f]]),
    ratios: {
      postgraphile_over_branchgraph_by_key: ratio('by_key'),
      postgraphile_over_branchgraph_filtered_page: ratio('filtered_page'),
      postgraphile_over_branchgraph_two_hop: ratio('two_hop'),
      postgraphile_over_branchgraph_in_edges: ratio('in_edges'),
      postgraphile_over_branchgraph_mutation_batch: ratio('mutation_batch'),
      // The same 100 rows as PostgreSQL's one INSERT statement over a long-lived connection: the engine in its best shape.
      statement_over_branchgraph_mutation_batch: round(
        (f.mutation_batch_statement_p50 as number) / (f.mutation_batch_ours_p50 as number),
        3,
      ),
      ...tails,
      store_calls_two_hop_per_level: Math.max(...levels.map((k) => f[k] as number)),
      // Each level's store calls over the segments it touched (a run's segment list is one more call).
      store_calls_over_segments_two_hop: round(
        Math.max(...levels.map((k) => (f[k] as number) / Math.max(1, f[k.replace('_store_calls', '_segments')] as number))),
        3,
      ),
    },
  };
}

function table(results: Result[]): string {
  const head = [
    'matrix',
    'variant',
    'median ms',
    'pair ratios',
    'calls',
    'bytes read',
    'rss MiB',
    'phases ms (resolve/base/prepare/validate/publish/cleanup)',
  ];
  const rows = results.map((r) => [
    r.matrix,
    r.variant,
    r.medianMs.toFixed(1),
    r.pairRatios.map((x) => x.toFixed(2)).join(' '),
    String(r.storeCalls.total),
    String(r.bytesRead),
    String(r.peakRssMiB),
    r.matrix === 'growth' || r.matrix === 'bulk' || r.matrix === 'query' || r.matrix === 'merges' || r.matrix === 'large'
      ? Object.entries(r.params)
          .filter(([k]) => k !== 'peakRssMiB')
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : r.matrix === 'catchup'
        ? `list ${(r.phasesMs.list ?? 0).toFixed(0)} / pipeline ${(r.phasesMs.pipeline ?? 0).toFixed(0)}; ${r.phasesMs.batches} batches, ${r.phasesMs.overlapped} overlapped, ${r.phasesMs.generationsPerSecond} gen/s`
        : ['resolve', 'base', 'prepare', 'validate', 'publish', 'cleanup'].map((p) => (r.phasesMs[p] ?? 0).toFixed(0)).join('/'),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(w[i] as number)).join('  ')).join('\n');
}

/** A grouped bar chart of the merge matrix as SVG. */
export function mergeChart(results: Result[]): string {
  const groups = [1, 8, 29];
  const modes = ['width1', 'width4', 'http'];
  const colors: Record<string, string> = { width1: '#7f8c8d', width4: '#2e86de', http: '#e67e22' };
  const max = Math.max(...results.filter((r) => r.matrix === 'merge').map((r) => r.medianMs));
  const W = 640,
    H = 320,
    left = 60,
    bottom = 40,
    top = 30,
    bw = 40;
  const scale = (v: number) => ((H - bottom - top) * v) / max;
  let bars = '';
  groups.forEach((t, gi) => {
    modes.forEach((m, mi) => {
      const r = results.find((x) => x.variant === `${m}-t${t}`);
      if (r === undefined) return;
      const x = left + gi * 190 + mi * (bw + 6) + 20;
      const h = scale(r.medianMs);
      bars += `<rect x="${x}" y="${H - bottom - h}" width="${bw}" height="${h}" fill="${colors[m]}"/><text x="${x + bw / 2}" y="${H - bottom - h - 4}" font-size="10" text-anchor="middle">${Math.round(r.medianMs)}</text>`;
    });
    bars += `<text x="${left + gi * 190 + 80}" y="${H - bottom + 16}" font-size="12" text-anchor="middle">${t} touched</text>`;
  });
  const legend = modes
    .map(
      (m, i) =>
        `<rect x="${left + i * 150}" y="8" width="12" height="12" fill="${colors[m]}"/><text x="${left + i * 150 + 16}" y="18" font-size="12">${m === 'http' ? 'REST (width 1)' : m.replace('width', 'embedded width ')}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${legend}<line x1="${left}" y1="${H - bottom}" x2="${W - 10}" y2="${H - bottom}" stroke="#333"/><text x="14" y="${H / 2}" font-size="12" transform="rotate(-90 14 ${H / 2})">median merge ms (17 ms per store call)</text>${bars}</svg>\n`;
}

/** The bulk matrix's goals (bench/goals.ts): at most (`max`) or at least (`min`) this figure; keys with the quick size. */
const BULK_GOALS: [key: string, goal: number, kind: 'max' | 'min'][] = GOALS.filter((g) => g.matrix === 'bulk').map((g) =>
  'max' in g ? [g.key, g.max, 'max'] : [g.key, 'min' in g ? g.min : 1, 'min'],
);

/**
 * The bulk matrix as SVG: each goal's figure as a multiple of the goal, on a log scale (the line at
 * 1 is the goal; below it is met), now beside a baseline run when one is given.
 */
export function bulkChart(now: Record<string, number | boolean>, size: string, baseline?: Record<string, number | boolean>): string {
  const W = 800;
  const H = 360;
  const left = 140;
  const bottom = 100;
  const top = 30;
  const bw = 28;
  const lo = Math.log10(0.01);
  const hi = Math.log10(1000);
  const y = (v: number): number => top + ((hi - Math.log10(Math.min(1000, Math.max(0.01, v)))) / (hi - lo)) * (H - top - bottom);
  const of = (o: {
    r?: Record<string, number | boolean> | undefined;
    key: string;
    goal: number;
    kind: 'max' | 'min';
  }): number | undefined => {
    const { r, key, goal, kind } = o;
    const v = r?.[key];
    if (typeof v !== 'number') return undefined;
    return kind === 'max' ? v / goal : goal / Math.max(v, 1e-9);
  };
  let bars = '';
  BULK_GOALS.forEach(([k, goal, kind], i) => {
    const x0 = left + 10 + i * 80;
    const pairs: [number | undefined, string][] = [
      [of({ r: baseline, key: k.replace('SIZE', '100k'), goal, kind }), '#95a5a6'],
      [of({ r: now, key: k.replace('SIZE', size), goal, kind }), '#2e86de'],
    ];
    pairs.forEach(([v, color], j) => {
      if (v === undefined) return;
      const x = x0 + j * (bw + 4);
      const [a, b] = [y(Math.max(v, 1)), y(Math.min(v, 1))];
      bars += `<rect x="${x}" y="${Math.min(a, b)}" width="${bw}" height="${Math.max(1, Math.abs(b - a))}" fill="${color}"/><text x="${x + bw / 2}" y="${v >= 1 ? a - 3 : b + 11}" font-size="9" text-anchor="middle">${v >= 10 ? v.toFixed(0) : v.toFixed(2)}</text>`;
    });
    bars += `<text x="${x0 + bw}" y="${H - bottom + 14}" font-size="9" text-anchor="end" transform="rotate(-35 ${x0 + bw} ${H - bottom + 14})">${k.replace('SIZE', size).replace(/_/g, ' ')}</text>`;
  });
  const nowKey = `<rect x="${left + 300}" y="8" width="12" height="12" fill="#2e86de"/><text x="${left + 316}" y="18" font-size="12">now</text>`;
  const legend = `${baseline === undefined ? '' : `<rect x="${left}" y="8" width="12" height="12" fill="#95a5a6"/><text x="${left + 16}" y="18" font-size="12">baseline (before indexes and merge plans)</text>`}${nowKey}`;
  const goalLine = `<line x1="${left}" y1="${y(1)}" x2="${W - 10}" y2="${y(1)}" stroke="#c0392b" stroke-dasharray="4 3"/><text x="${W - 12}" y="${y(1) - 4}" font-size="10" text-anchor="end" fill="#c0392b">goal</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${legend}${goalLine}<text x="24" y="${(H - bottom) / 2 + top}" font-size="11" text-anchor="middle" transform="rotate(-90 24 ${(H - bottom) / 2 + top})">figure ÷ goal, log scale</text>${bars}</svg>\n`;
}

/** One bar pair of a before/after chart: a figure's baseline (when measured) and now, with its unit. */
export interface ChartBar {
  label: string;
  before?: number | undefined;
  now: number;
}

/**
 * Grouped bars, the baseline (grey) beside now (blue), each group on its own linear scale from 0
 * to the group's largest figure, so figures of different units share one picture.
 */
export function beforeAfterChart(
  title: string,
  groups: { title: string; bars: ChartBar[] }[],
  legend: [before: string, now: string] = ['before', 'now'],
): string {
  const W = 860;
  const H = 330;
  const top = 50;
  const bottom = 90;
  const bw = 22;
  const groupW = (W - 40) / Math.max(1, groups.length);
  let body = '';
  groups.forEach((g, gi) => {
    const x0 = 30 + gi * groupW;
    const max = Math.max(...g.bars.flatMap((b) => [b.now, b.before ?? 0]), 1e-9);
    const y = (v: number) => H - bottom - (v / max) * (H - top - bottom);
    const slot = (groupW - 20) / Math.max(1, g.bars.length);
    g.bars.forEach((b, bi) => {
      const x = x0 + 10 + bi * slot;
      const pairs: [number | undefined, string][] = [
        [b.before, '#95a5a6'],
        [b.now, '#2e86de'],
      ];
      pairs.forEach(([v, color], j) => {
        if (v === undefined) return;
        const bx = x + j * (bw + 2);
        body += `<rect x="${bx}" y="${y(v)}" width="${bw}" height="${Math.max(1, H - bottom - y(v))}" fill="${color}"/><text x="${bx + bw / 2}" y="${y(v) - 3}" font-size="9" text-anchor="middle">${Number.isInteger(v) || v >= 100 ? v.toFixed(0) : v.toFixed(v >= 10 ? 1 : 2)}</text>`;
      });
      body += `<text x="${x + bw}" y="${H - bottom + 14}" font-size="10" text-anchor="end" transform="rotate(-30 ${x + bw} ${H - bottom + 14})">${b.label}</text>`;
    });
    body += `<text x="${x0 + groupW / 2}" y="${top - 12}" font-size="12" text-anchor="middle">${g.title}</text><line x1="${x0 + 5}" y1="${H - bottom}" x2="${x0 + groupW - 10}" y2="${H - bottom}" stroke="#333"/>`;
  });
  const nowX = 60 + legend[0].length * 7;
  const key = `<rect x="30" y="8" width="12" height="12" fill="#95a5a6"/><text x="46" y="18" font-size="12">${legend[0]}</text><rect x="${nowX}" y="8" width="12" height="12" fill="#2e86de"/><text x="${nowX + 16}" y="18" font-size="12">${legend[1]}</text><text x="${W - 10}" y="18" font-size="12" text-anchor="end">${title}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${key}${body}</svg>\n`;
}

/** Bars over two ratio records: the figure named `k` now and, when the baseline measured it, before. */
function ratioBars(
  now: Record<string, number | boolean>,
  before?: Record<string, number | boolean>,
): (label: string, k: string) => ChartBar {
  const n = (r: Record<string, number | boolean> | undefined, k: string) => (typeof r?.[k] === 'number' ? (r[k] as number) : undefined);
  return (label, k) => ({ label, before: n(before, k), now: n(now, k) ?? 0 });
}

/** The merges matrix as a chart: merges per second and store calls per merge, beside a baseline run's. */
export function mergesChart(now: Record<string, number | boolean>, before?: Record<string, number | boolean>): string {
  const bar = ratioBars(now, before);
  return beforeAfterChart('merges into main, 17 ms per store call', [
    {
      title: 'merges per second',
      bars: [
        bar('1 client', 'merges_per_second_1_l17'),
        bar('8 clients', 'merges_per_second_8_l17'),
        bar('8 over 2 processes', 'merges_per_second_8_l17_2proc'),
      ],
    },
    { title: 'errors seen by callers', bars: [bar('8 clients', 'merge_errors_8'), bar('8 over 2 processes', 'merge_errors_8_2proc')] },
    { title: 'store calls per merge', bars: [bar('1 client', 'store_calls_per_merge_1'), bar('8 clients', 'store_calls_per_merge_8')] },
  ]);
}

/** The large matrix as a chart: merge times on both graphs, store calls and bytes read, load rate, beside a baseline. */
export function largeChart(now: Record<string, number | boolean>, before?: Record<string, number | boolean>): string {
  const bar = ratioBars(now, before);
  return beforeAfterChart('an 18-table graph, a 200-row merge in a cold process', [
    {
      title: 'merge ms',
      bars: [bar('p50, big', 'merge_p50_ms'), bar('p95, big', 'merge_p95_ms'), bar('p50, 1/100 size', 'small_merge_p50_ms')],
    },
    { title: 'store calls', bars: [bar('big', 'store_calls'), bar('1/100 size', 'small_store_calls')] },
    { title: 'read ÷ changed bytes', bars: [bar('big', 'bytes_read_over_changed_bytes')] },
    { title: 'load rows per second', bars: [bar('write path', 'load_rows_per_second')] },
  ]);
}

/** The forks matrix as a chart: deep over main for a scan and a point read, branch creation among many, and their store calls. */
export function forksChart(now: Record<string, number | boolean>, before?: Record<string, number | boolean>): string {
  const bar = ratioBars(now, before);
  return beforeAfterChart('a branch 64 forks deep, 17 ms per store call', [
    {
      title: 'ratios (goal ≤ 1.1 / ≤ 1.2)',
      bars: [
        bar('scan, deep ÷ main', 'read_deep_over_main_scan'),
        bar('point, deep ÷ main', 'read_deep_over_main_point'),
        // The quick run creates among 1,000 branches, the full one among 10,000.
        bar(
          'create, many ÷ 10',
          'branch_create_at_10000_over_at_10' in now ? 'branch_create_at_10000_over_at_10' : 'branch_create_at_1000_over_at_10',
        ),
      ],
    },
    { title: 'scan store calls', bars: [bar('main', 'scan_main_calls'), bar('deep', 'scan_deep_calls')] },
    { title: 'point read store calls', bars: [bar('main', 'point_main_calls'), bar('deep', 'point_deep_calls')] },
  ]);
}

/**
 * A run on S3 as a chart: each arm's median time and store calls, beside the same arm's with
 * latency injected over a local directory. Store calls must be equal; times show what the real
 * server's round trips cost against the injected ones.
 */
export function s3Chart(matrix: string, s3: Result[], injected: Result[]): string {
  const base = new Map(injected.filter((r) => r.matrix === matrix).map((r) => [r.variant, r]));
  const arms = s3.filter((r) => r.matrix === matrix);
  return beforeAfterChart(
    `${matrix} on S3 beside injected latency`,
    [
      { title: 'median ms', bars: arms.map((r) => ({ label: r.variant, before: base.get(r.variant)?.medianMs, now: r.medianMs })) },
      {
        title: 'store calls',
        bars: arms.map((r) => ({ label: r.variant, before: base.get(r.variant)?.storeCalls.total, now: r.storeCalls.total ?? 0 })),
      },
    ],
    ['injected latency, local directory', 'S3 (Ceph RGW)'],
  );
}

/**
 * The injected-latency results a run on S3 is drawn beside: the same matrix's run in the same output
 * directory (a session that ran both), else the stored full run, else the stored `all` run.
 */
async function injectedResults(matrix: string, out: string, quick: boolean): Promise<Result[]> {
  for (const file of [path.join(out, `${matrix}${quick ? '-quick' : ''}.json`), `bench/results/${matrix}.json`, 'bench/results/all.json']) {
    const r = JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as { results?: Result[] };
    if (r.results?.some((x) => x.matrix === matrix)) return r.results;
  }
  return [];
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { quick: { type: 'boolean' }, out: { type: 'string' }, store: { type: 'string' } },
  });
  const which = positionals[0] ?? 'all';
  const quick = values.quick === true;
  // `--store s3`: every sample's graph on the S3 server the environment names (scripts/s3-start.sh), its real round trips in place of injected latency.
  const onS3 = values.store === 's3';
  if (values.store !== undefined && !onS3 && values.store !== 'fs') throw new Error(`--store ${values.store}: use fs (the default) or s3`);
  if (onS3) {
    if (!process.env.S3_ENDPOINT) throw new Error('--store s3 needs an S3 server: bash scripts/s3-start.sh DIR, then source DIR/s3.env');
    if (!['merge', 'history', 'catchup', 'large'].includes(which))
      throw new Error('--store s3 runs the merge, history, catchup and large matrices');
    process.env.BENCH_STORE = 's3';
  }
  const matrices: Record<string, (q: boolean) => Promise<{ results: Result[]; ratios: Record<string, number | boolean> }>> = {
    merge: mergeMatrix,
    history: historyMatrix,
    scale: scaleMatrix,
    catchup: catchUpMatrix,
    growth: growthMatrix,
    review: reviewMatrix,
    bulk: bulkMatrix,
    query: queryMatrix,
    entity: entityMatrix,
    requests: requestsMatrix,
    hooks: hooksMatrix,
    forks: forksMatrix,
    merges: mergesMatrix,
    large: largeMatrix,
    branchbench: branchbenchMatrix,
    load: loadMatrix,
    writes: writesMatrix,
    remotes: remotesMatrix,
    search: searchMatrix,
    start: startMatrix,
  };
  // `all` runs the remotes matrix only where an S3 server is named; its goals then read "not run".
  const names = which === 'all' ? Object.keys(matrices).filter((n) => n !== 'remotes' || process.env.S3_ENDPOINT) : [which];
  for (const n of names)
    if (!(n in matrices))
      throw new Error(
        `unknown matrix ${n}; use merge, history, scale, catchup, growth, review, bulk, query, entity, requests, hooks, forks, merges, large, branchbench, load, writes, remotes, search, start or all`,
      );
  const out = values.out ?? '.bench/results';
  await mkdir(out, { recursive: true });
  const all: Result[] = [];
  const ratios: Record<string, Record<string, number | boolean>> = {};
  for (const n of names) {
    const r = await (matrices[n] as (q: boolean) => ReturnType<typeof mergeMatrix>)(quick);
    all.push(...r.results);
    ratios[n] = r.ratios;
  }
  const report = {
    date: new Date().toISOString(),
    quick,
    store: onS3 ? 's3' : 'fs',
    node: process.version,
    results: all,
    ratios,
    goals: verdicts(ratios, quick ? '100k' : '400k'),
  };
  const file = path.join(out, `${which}${quick ? '-quick' : ''}${onS3 ? '-s3' : ''}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  if (names.includes('merge')) await writeFile(path.join(out, 'merge-chart.svg'), mergeChart(all));
  if (names.includes('bulk')) {
    // The quick run is drawn beside the baseline measured before indexes and merge plans existed.
    const baseline = quick
      ? ((
          JSON.parse(await readFile('bench/results/bulk-baseline-quick.json', 'utf8').catch(() => '{}')) as {
            ratios?: { bulk?: Record<string, number> };
          }
        ).ratios?.bulk ?? undefined)
      : undefined;
    await writeFile(
      path.join(out, `bulk${quick ? '-quick' : ''}-chart.svg`),
      bulkChart(ratios.bulk ?? {}, quick ? '100k' : '400k', baseline),
    );
  }
  // These two are drawn beside the round measured before publication lanes and kept @unique values, when present.
  const baseline = async (name: string): Promise<Record<string, number | boolean> | undefined> =>
    (
      JSON.parse(await readFile(`bench/results/round3/${name}-quick-before.json`, 'utf8').catch(() => '{}')) as {
        ratios?: Record<string, Record<string, number | boolean>>;
      }
    ).ratios?.[name];
  if (names.includes('merges'))
    await writeFile(path.join(out, 'merges-chart.svg'), mergesChart(ratios.merges ?? {}, await baseline('merges')));
  if (names.includes('large')) await writeFile(path.join(out, 'large-chart.svg'), largeChart(ratios.large ?? {}, await baseline('large')));
  if (names.includes('forks')) await writeFile(path.join(out, 'forks-chart.svg'), forksChart(ratios.forks ?? {}, await baseline('forks')));
  if (onS3) await writeFile(path.join(out, `${which}-s3-chart.svg`), s3Chart(which, all, await injectedResults(which, out, quick)));
  // Every goal of bench/README.md for the matrices that ran, met or missed, after the figures.
  const goals = goalReport(verdicts(ratios, quick ? '100k' : '400k'));
  process.stdout.write(`${table(all)}\n\nratios ${JSON.stringify(ratios, null, 2)}\n\n${goals}\n\nwrote ${file}\n`);
}

// Run when executed, not when a script imports the chart functions.
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
