/**
 * Server configuration from environment variables and command-line flags
 * (flags win), validated at boot. Every problem is listed at once, so an
 * operator fixes a bad deployment in one pass.
 */
import os from 'node:os';
import { BranchgraphError } from '../model/errors.js';
import { parseStoreUrl } from '../store/open-store.js';
import { parseTokens, type Grant } from './auth.js';
import { LIMITS } from './inputs.js';
import { DEFAULT_MAX_INGEST_BYTES } from '../graph/ndjson.js';
import { isValidShard } from '../pending/generation.js';
import { DEFAULT_GENERATION_ROWS, DEFAULT_SEAL_AFTER_MS } from '../wal/wal-writer.js';
import { DEFAULT_CATCHUP_SETTINGS, type CatchUpSettings } from '../wal/catch-up-manager.js';
import { DEFAULT_BUDGET_BYTES } from '../merge/preparation-scheduler.js';
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from './compactor.js';

/** Validated server and engine configuration (see `CONFIG_HELP` for every setting). */
export interface Config {
  store: string;
  host: string;
  port: number;
  tokens: Map<string, Grant>;
  actor: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  mergeWidth: 1 | 2 | 4;
  budgetBytes: number;
  storeLatencyMs: number;
  maxBodyBytes: number;
  /** The most bytes one ingest body may stream (ingest is never buffered, so it has its own limit). */
  maxIngestBytes: number;
  /** How long a stopping server waits for in-flight requests before it closes their connections. */
  drainTimeoutMs: number;
  /** This process's WAL writer identity; stable across restarts, unique among running writers. */
  shard: string;
  sealAfterMs: number;
  generationRows: number;
  catchUp: CatchUpSettings;
  compaction: CompactionSettings;
  /** Leaf size of manifest part trees; undefined keeps the engine's defaults. */
  manifestPartBytes: number | undefined;
}

export const CONFIG_HELP = `
  --store URL          BRANCHGRAPH_STORE              file://./data (default), s3://bucket/prefix?endpoint=..., memory://
  --host HOST          HOST                           127.0.0.1
  --port N             PORT                           8080 (0 picks a free port)
  --tokens SPEC        BRANCHGRAPH_TOKENS             role:token[:identity],... with roles read, write, admin (unset: open); commits record the identity as their actor
  --actor NAME         BRANCHGRAPH_ACTOR              author recorded on commits (default: host name)
  --log-level LEVEL    LOG_LEVEL                      info
  --merge-width N      BRANCHGRAPH_MERGE_WIDTH        1, 2 or 4 for embedded and CLI merges (HTTP always uses 1)
  --budget-bytes N     BRANCHGRAPH_PREP_BUDGET_BYTES  preparation memory budget, default 134217728
  --store-latency-ms N BRANCHGRAPH_STORE_LATENCY_MS   inject latency per store call (benchmarks)
  --max-body-bytes N   BRANCHGRAPH_MAX_BODY_BYTES     default 16777216
  --max-ingest-bytes N BRANCHGRAPH_MAX_INGEST_BYTES   bytes one ingest request may stream, default 1073741824
  --drain-timeout-ms N BRANCHGRAPH_DRAIN_TIMEOUT_MS   on SIGTERM, wait this long for in-flight requests, then close them (10000)
  --shard NAME         BRANCHGRAPH_SHARD              WAL writer identity, one per running server (default: host name)
  --seal-after-ms N    WAL_SEAL_AFTER_MS              seal an open WAL generation after this long, default 1000
  --generation-rows N  WAL_GENERATION_ROWS            seal a WAL generation at this many rows, default 4096
                       CATCHUP_PIPELINE_ENABLED       true (default) or false: prepare the next batch while one commits
                       CATCHUP_MERGE_MAX_GENERATIONS  generations per catch-up batch, default 64; 0 removes the count cap
                       CATCHUP_MAX_BYTES              bytes per catch-up batch, default 67108864
                       CATCHUP_MEMORY_BUDGET_BYTES    memory shared by the (at most two) live batches, default 268435456
                       CATCHUP_TRIGGER_GENERATIONS    background catch-up when this many generations are pending, default 16; 0 disables
                       CATCHUP_INTERVAL_MS            how often the background trigger looks, default 1000
                       COMPACTION_BACKGROUND          true (default) or false: compact tables after publications, size-tiered
                       COMPACTION_DELAY_MS            how long after a change a branch is looked at, default 250
                       MANIFEST_PART_BYTES            leaf size of manifest part trees (tables 65536 inline then 4096, ancestry 4096); tests set it small
`;

/** The host name, reduced to what a shard name may hold. */
function defaultShard(): string {
  return (
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 64) || 'shard'
  );
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Configuration from environment variables and flags (flags win), validated at once: every problem is listed in one `invalid_input`. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: Record<string, string | undefined> = {}): Config {
  const problems: { path: string; message: string }[] = [];
  const pick = (flag: string | undefined, envName: string): string | undefined => (flag === undefined ? undefined : flags[flag]) ?? env[envName];
  const int = (flag: string | undefined, envName: string, dflt: number, min: number, max: number): number => {
    const v = pick(flag, envName);
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push({ path: flag === undefined ? envName : `--${flag} / ${envName}`, message: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}` });
      return dflt;
    }
    return n;
  };
  const store = pick('store', 'BRANCHGRAPH_STORE') ?? 'file://./data';
  try {
    parseStoreUrl(store, env);
  } catch (e) {
    problems.push({ path: '--store / BRANCHGRAPH_STORE', message: (e as Error).message });
  }
  const { tokens, problems: tokenProblems } = parseTokens(pick('tokens', 'BRANCHGRAPH_TOKENS'));
  for (const p of tokenProblems) problems.push({ path: '--tokens / BRANCHGRAPH_TOKENS', message: p });
  const level = pick('log-level', 'LOG_LEVEL') ?? 'info';
  if (!(LEVELS as readonly string[]).includes(level)) problems.push({ path: '--log-level / LOG_LEVEL', message: `must be one of ${LEVELS.join(', ')}` });
  const width = int('merge-width', 'BRANCHGRAPH_MERGE_WIDTH', 1, 1, 4);
  if (![1, 2, 4].includes(width)) problems.push({ path: '--merge-width / BRANCHGRAPH_MERGE_WIDTH', message: 'must be 1, 2 or 4' });
  const pipelineFlag = (env.CATCHUP_PIPELINE_ENABLED ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(pipelineFlag)) problems.push({ path: 'CATCHUP_PIPELINE_ENABLED', message: `must be true or false, got ${JSON.stringify(env.CATCHUP_PIPELINE_ENABLED)}` });
  const compactionFlag = (env.COMPACTION_BACKGROUND ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(compactionFlag)) problems.push({ path: 'COMPACTION_BACKGROUND', message: `must be true or false, got ${JSON.stringify(env.COMPACTION_BACKGROUND)}` });
  const shard = pick('shard', 'BRANCHGRAPH_SHARD') ?? defaultShard();
  if (!isValidShard(shard))
    problems.push({ path: '--shard / BRANCHGRAPH_SHARD', message: `must be 1-64 letters, digits, '.', '_' or '-', and not a reserved name such as constructor, got ${JSON.stringify(shard)}` });
  const envInt = (name: string, dflt: number, min: number, max: number): number => int(undefined, name, dflt, min, max);
  const config: Config = {
    store,
    host: pick('host', 'HOST') ?? '127.0.0.1',
    port: int('port', 'PORT', 8080, 0, 65535),
    tokens,
    actor: pick('actor', 'BRANCHGRAPH_ACTOR') ?? os.hostname(),
    logLevel: level as Config['logLevel'],
    mergeWidth: width as 1 | 2 | 4,
    budgetBytes: int('budget-bytes', 'BRANCHGRAPH_PREP_BUDGET_BYTES', DEFAULT_BUDGET_BYTES, 1, Number.MAX_SAFE_INTEGER),
    storeLatencyMs: int('store-latency-ms', 'BRANCHGRAPH_STORE_LATENCY_MS', 0, 0, 60_000),
    maxBodyBytes: int('max-body-bytes', 'BRANCHGRAPH_MAX_BODY_BYTES', LIMITS.maxBodyBytes, 1024, 1 << 30),
    maxIngestBytes: int('max-ingest-bytes', 'BRANCHGRAPH_MAX_INGEST_BYTES', DEFAULT_MAX_INGEST_BYTES, 1024, Number.MAX_SAFE_INTEGER),
    drainTimeoutMs: int('drain-timeout-ms', 'BRANCHGRAPH_DRAIN_TIMEOUT_MS', 10_000, 0, 3_600_000),
    shard,
    sealAfterMs: int('seal-after-ms', 'WAL_SEAL_AFTER_MS', DEFAULT_SEAL_AFTER_MS, 1, 3_600_000),
    generationRows: int('generation-rows', 'WAL_GENERATION_ROWS', DEFAULT_GENERATION_ROWS, 1, 1_000_000),
    catchUp: {
      pipeline: pipelineFlag === 'true' || pipelineFlag === '1',
      maxGenerations: envInt('CATCHUP_MERGE_MAX_GENERATIONS', DEFAULT_CATCHUP_SETTINGS.maxGenerations, 0, 1_000_000),
      maxBytes: envInt('CATCHUP_MAX_BYTES', DEFAULT_CATCHUP_SETTINGS.maxBytes, 1, Number.MAX_SAFE_INTEGER),
      budgetBytes: envInt('CATCHUP_MEMORY_BUDGET_BYTES', DEFAULT_CATCHUP_SETTINGS.budgetBytes, 1, Number.MAX_SAFE_INTEGER),
      triggerGenerations: envInt('CATCHUP_TRIGGER_GENERATIONS', DEFAULT_CATCHUP_SETTINGS.triggerGenerations, 0, 1_000_000),
      intervalMs: envInt('CATCHUP_INTERVAL_MS', DEFAULT_CATCHUP_SETTINGS.intervalMs, 10, 3_600_000),
    },
    compaction: {
      background: compactionFlag === 'true' || compactionFlag === '1',
      delayMs: envInt('COMPACTION_DELAY_MS', DEFAULT_COMPACTION_SETTINGS.delayMs, 0, 3_600_000),
    },
    manifestPartBytes: env.MANIFEST_PART_BYTES === undefined || env.MANIFEST_PART_BYTES === '' ? undefined : envInt('MANIFEST_PART_BYTES', 0, 64, 1 << 20),
  };
  if (problems.length > 0) {
    throw new BranchgraphError('invalid_input', `invalid configuration:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`, { issues: problems });
  }
  return config;
}
