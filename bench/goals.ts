/**
 * Every goal bench/README.md sets, in one table, and the verdict on a run:
 * met, missed, or not run. The harness prints the verdicts of the matrices
 * it ran after their figures, so a missed target is never left for a
 * reader to spot in the JSON. Keys match the ratios the matrices report
 * (`SIZE` stands for the bulk matrix's 100k or 400k).
 */
export type Goal =
  | { matrix: string; key: string; max: number }
  | { matrix: string; key: string; min: number }
  | { matrix: string; key: string; equals: boolean };

const merge: Goal[] = [
  { matrix: 'merge', key: 'width4_speedup_t29', min: 3 },
  { matrix: 'merge', key: 'width4_speedup_t8', min: 2.5 },
  { matrix: 'merge', key: 'width4_speedup_t1', min: 1 },
  // Store calls ≤ 4 × touched + 10.
  { matrix: 'merge', key: 'store_calls_t1', max: 14 },
  { matrix: 'merge', key: 'store_calls_t8', max: 42 },
  { matrix: 'merge', key: 'store_calls_t29', max: 126 },
  // The protocol's floor: 4 dependent round trips from a cold start, 3 in a warm process.
  { matrix: 'merge', key: 'dependent_round_trips_t1', max: 4 },
  { matrix: 'merge', key: 'dependent_round_trips_t29', max: 4 },
  { matrix: 'merge', key: 'dependent_round_trips_warm_t1', max: 3 },
  { matrix: 'merge', key: 'http_over_embedded_t1', max: 1.1 },
  { matrix: 'merge', key: 'http_over_embedded_t8', max: 1.1 },
  { matrix: 'merge', key: 'http_over_embedded_t29', max: 1.1 },
  { matrix: 'history', key: 'store_calls_equal', equals: true },
  { matrix: 'history', key: 'h64_over_h0', max: 1.1 },
  { matrix: 'scale', key: 'large_over_small', max: 3 },
];

const catchup: Goal[] = ['unique', 'updates'].flatMap((w) =>
  [0, 17].map((l): Goal => ({ matrix: 'catchup', key: `pipeline64_over_serial8_${w}_l${l}`, min: 2.5 })),
);

const growth: Goal[] = [
  { matrix: 'growth', key: 'write_meta_bytes_last_over_first', max: 1.5 },
  { matrix: 'growth', key: 'storage_bytes_per_row', max: 2000 },
  { matrix: 'growth', key: 'scan_after_writes_over_fresh', max: 1.5 },
  { matrix: 'growth', key: 'scan_after_writes_over_fresh_no_compactor', max: 1.5 },
  { matrix: 'growth', key: 'scan_after_writes_over_fresh_l17', max: 1.5 },
  { matrix: 'growth', key: 'merge_last_over_first_branches', max: 1.2 },
  { matrix: 'growth', key: 'manifest_bytes_last_over_first', max: 1.2 },
  { matrix: 'growth', key: 'write_meta_bytes_1000_tables', max: 8192 },
  { matrix: 'growth', key: 'group_commit_8_over_1_l17', min: 4 },
  { matrix: 'growth', key: 'contention_errors_8', max: 0 },
  { matrix: 'growth', key: 'merge_after_compaction_read_fraction', max: 0.05 },
  { matrix: 'growth', key: 'git_over_branchgraph_scale', min: 1 },
  { matrix: 'growth', key: 'git_over_branchgraph_branches', min: 1 },
];

const bulk: Goal[] = [
  { matrix: 'bulk', key: 'unique_insert_SIZE_over_plain', max: 1.5 },
  { matrix: 'bulk', key: 'cascade_delete_SIZE_over_insert', max: 2 },
  { matrix: 'bulk', key: 'skewed_merge_over_small_merge', max: 3 },
  { matrix: 'bulk', key: 'both_big_rows_per_second', min: 200_000 },
  { matrix: 'bulk', key: 'conflicts_SIZE_first_page_ms_over_small_merge', max: 10 },
  { matrix: 'bulk', key: 'peak_rss_over_budget_mib', max: 250 },
  { matrix: 'bulk', key: 'git_over_branchgraph_skewed', min: 1 },
  { matrix: 'bulk', key: 'git_over_branchgraph_both', min: 1 },
];

const rest: Goal[] = [
  { matrix: 'entity', key: 'versions_agree', equals: true },
  { matrix: 'entity', key: 'every_commit_over_history_calls_c10000', min: 10 },
  { matrix: 'hooks', key: 'write_p50_4_hooks_over_0', max: 1.1 },
  { matrix: 'forks', key: 'read_deep_over_main', max: 1.1 },
  { matrix: 'forks', key: 'branch_create_at_10000_over_at_10', max: 1.2 },
  { matrix: 'merges', key: 'merges_per_second_8_l17', min: 10 },
  { matrix: 'merges', key: 'merges_8_over_1_l17', min: 4 },
  { matrix: 'merges', key: 'merge_errors_8', max: 0 },
  { matrix: 'merges', key: 'merges_per_second_8_l17_2proc', min: 10 },
  { matrix: 'merges', key: 'merges_8_over_1_l17_2proc', min: 4 },
  { matrix: 'merges', key: 'merge_errors_8_2proc', max: 0 },
  { matrix: 'merges', key: 'every_merge_exact', equals: true },
  { matrix: 'merges', key: 'merges_per_second_16_l17', min: 100 },
  { matrix: 'merges', key: 'merge_errors_16', max: 0 },
  { matrix: 'large', key: 'large_over_small', max: 1.5 },
  { matrix: 'large', key: 'load_rows_per_second', min: 200_000 },
  // BranchBench's leaderboard: Doltgres creates a branch in 17.2 ms and reads a point in 94 µs.
  { matrix: 'branchbench', key: 'create_ms', max: 17 },
  { matrix: 'branchbench', key: 'point_read_ms', max: 0.1 },
  { matrix: 'branchbench', key: 'postgres_over_branchgraph_create', min: 10 },
  { matrix: 'branchbench', key: 'read_depth_1024_over_1', max: 1.2 },
  // COPY's rows per second over ours; the peak is the loading process's whole RSS (at 1,000,000 rows in a full run).
  { matrix: 'load', key: 'copy_over_branchgraph', max: 1.5 },
  { matrix: 'load', key: 'rows_per_second', min: 200_000 },
  { matrix: 'load', key: 'peak_rss_mib', max: 256 },
  // A durable write beside PostgreSQL's one-statement INSERT, medians, local directory.
  { matrix: 'writes', key: 'write_1_over_insert', max: 2 },
  { matrix: 'writes', key: 'write_100_over_insert', max: 2 },
  ...['write_1', 'write_100', 'write_1_l17', 'write_100_l17'].map((w): Goal => ({ matrix: 'writes', key: `${w}_p95_over_p50`, max: 2 })),
  { matrix: 'remotes', key: 'clone_over_rclone_throughput', min: 0.8 },
  { matrix: 'remotes', key: 'fetch_bytes_over_new_object_bytes', max: 2 },
  // Equal: a fetch's calls do not depend on how much history lies behind the change.
  { matrix: 'remotes', key: 'fetch_store_calls_h64_over_h0', max: 1 },
  { matrix: 'remotes', key: 'push_round_trips', max: 10 },
  { matrix: 'search', key: 'fts5_over_branchgraph_text_p50', min: 1 },
  { matrix: 'search', key: 'lancedb_over_branchgraph_vector_p50', min: 1 },
  { matrix: 'search', key: 'recall_at_10', min: 0.95 },
  { matrix: 'search', key: 'branch_after_merge_over_main', max: 1.2 },
  // The installed command line, process start included.
  { matrix: 'start', key: 'version_ms_p50', max: 500 },
  { matrix: 'start', key: 'embedded_read_ms_p50', max: 500 },
  { matrix: 'start', key: 'version_ms_p50_node24', max: 500 },
  { matrix: 'start', key: 'embedded_read_ms_p50_node24', max: 500 },
];

export const GOALS: readonly Goal[] = [...merge, ...catchup, ...growth, ...bulk, ...rest];

export type Verdict = 'met' | 'missed' | 'not run';

function target(g: Goal): string {
  return 'max' in g ? `≤ ${g.max}` : 'min' in g ? `≥ ${g.min}` : `= ${g.equals}`;
}

function judge(g: Goal, v: number | boolean | undefined): Verdict {
  if (v === undefined || (typeof v === 'number' && Number.isNaN(v))) return 'not run';
  if ('equals' in g) return v === g.equals ? 'met' : 'missed';
  if (typeof v !== 'number') return 'missed';
  return ('max' in g ? v <= g.max : v >= g.min) ? 'met' : 'missed';
}

/**
 * Each goal of the matrices that ran, with its figure and verdict. Query's goals are every
 * PostGraphile-over-ours ratio it reports (≥ 1) and each of our arms' p95 over its p50 (≤ 2); its
 * one-statement `INSERT` arm and PostGraphile's own tails are reported beside them with no goal of
 * their own (the writes matrix holds the engine-to-engine goal).
 */
export function verdicts(
  ratios: Record<string, Record<string, number | boolean>>,
  size: string,
): { goal: string; figure: string; verdict: Verdict }[] {
  const goals: Goal[] = [...GOALS.filter((g) => g.matrix in ratios)];
  for (const key of Object.keys(ratios.query ?? {})) {
    if (key.startsWith('postgraphile_over_')) goals.push({ matrix: 'query', key, min: 1 });
    if (key.startsWith('ours_p95_over_p50_')) goals.push({ matrix: 'query', key, max: 2 });
  }
  return goals.map((g) => {
    const key = g.key.replace('SIZE', size);
    const v = ratios[g.matrix]?.[key];
    return { goal: `${g.matrix}.${key} ${target(g)}`, figure: v === undefined ? '-' : String(v), verdict: judge(g, v) };
  });
}

/** The verdicts as lines, the missed ones first, and one closing count. */
export function goalReport(rows: ReturnType<typeof verdicts>): string {
  const order: Verdict[] = ['missed', 'not run', 'met'];
  const sorted = [...rows].sort((a, b) => order.indexOf(a.verdict) - order.indexOf(b.verdict));
  const lines = sorted.map((r) => `${r.verdict.padEnd(7)}  ${r.goal.padEnd(64)}  ${r.figure}`);
  const count = (v: Verdict) => rows.filter((r) => r.verdict === v).length;
  return `goals\n${lines.join('\n')}\ngoals: ${count('met')} met, ${count('missed')} missed, ${count('not run')} not run`;
}
