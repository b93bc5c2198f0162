/**
 * Server configuration from environment variables and command-line flags
 * (flags win), validated at boot. Every problem is listed at once, so an
 * operator fixes a bad deployment in one pass.
 */
import os from 'node:os';
import { BranchgraphError } from '../model/errors.js';
import { parseStoreUrl } from '../store/open-store.js';
import { parseTokens, type Grant } from './auth.js';
import { LIMITS } from './limits.js';
import { DEFAULT_MAX_INGEST_BYTES } from '../graph/ndjson.js';
import { isValidShard } from '../pending/generation.js';
import { DEFAULT_GENERATION_ROWS, DEFAULT_SEAL_AFTER_MS } from '../wal/wal-writer.js';
import { DEFAULT_CATCHUP_SETTINGS, type CatchUpSettings } from '../wal/catch-up-manager.js';
import { DEFAULT_BUDGET_BYTES } from '../merge/preparation-scheduler.js';
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from './compactor.js';
import { DEFAULT_HOOK_SETTINGS, type HookSettings } from './hook-dispatcher.js';
import { DEFAULT_EXPIRY_SETTINGS, type ExpirySettings } from './branch-expiry.js';
import { embedderProblem, type EmbedderSettings } from './embedders.js';

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
  /** Background compaction, and whether writes fold piled-up runs themselves (graph/append-run.ts). */
  compaction: CompactionSettings & { inline: boolean };
  /** Leaf size of manifest part trees; undefined keeps the engine's defaults. */
  manifestPartBytes: number | undefined;
  /** Webhook and check delivery. */
  hooks: HookSettings;
  /** How old a copy of the hook registry a delivery may use. */
  hookRefreshMs: number;
  /** How often expired branches are swept. */
  expiry: ExpirySettings;
  /** What fills `@embed` vectors and turns `near: {text}` into a vector. */
  embedder: EmbedderSettings;
  /** Origins a browser may call the API from (`*` for any); empty: same origin only, no CORS headers. */
  corsOrigins: string[];
  /**
   * The URL the graph's other servers reach this one at (`{port}` is the port it listens on): set, it
   * publishes the merges into branches it claims for them and forwards its own to their publishers
   * (service/merge-forwarding.ts). Unset: every merge runs here.
   */
  advertiseUrl: string | undefined;
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
                       COMPACTION_INLINE              true (default) or false: writes fold a table's piled-up newest runs
  --embedder URL       BRANCHGRAPH_EMBEDDER           what fills @embed vectors: local (default; deterministic, not semantic) or an OpenAI-compatible embeddings URL
                       BRANCHGRAPH_EMBEDDER_KEY       bearer key for that URL
                       BRANCHGRAPH_EMBEDDER_MODEL     model name sent to that URL, default text-embedding-3-small
  --cors-origins L     BRANCHGRAPH_CORS_ORIGINS       origins browsers may call the API from, comma-separated (https://app.example:8443), or * (unset: same origin only)
  --advertise-url URL  BRANCHGRAPH_ADVERTISE_URL      where the graph's other servers reach this one, e.g. http://10.0.0.5:{port}: merges into one branch through several servers then publish through one (unset: each server publishes its own)
  --hook-allowlist H   BRANCHGRAPH_HOOK_ALLOWLIST     hosts webhooks and checks may call: host, host:port, [v6]:port or *.domain, comma-separated (unset: none)
                       HOOK_TIMEOUT_MS                how long one delivery attempt or check may take, default 10000
                       HOOK_MAX_ATTEMPTS              attempts per delivery before it becomes a dead letter, default 6
                       HOOK_RETRY_BASE_MS             first wait before a retry, doubling up to HOOK_RETRY_MAX_MS (60000), default 1000
                       HOOK_QUEUE_LIMIT               deliveries of one hook queued or retrying at once; more become dead letters, default 1000
                       HOOK_CONCURRENCY               deliveries of one hook in flight at once (each hook has its own), default 4
                       HOOK_REFRESH_MS                how old a copy of the hook registry a server may use, default 5000
                       BRANCH_EXPIRY_INTERVAL_MS      how often expired branches are deleted, default 60000 (0: never on its own)
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

/** Reads settings from flags and environment variables (flags win), collecting every problem rather than stopping at one. */
class SettingReader {
  readonly problems: { path: string; message: string }[] = [];

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly flags: Record<string, string | undefined>,
  ) {}

  pick(flag: string | undefined, envName: string): string | undefined {
    return (flag === undefined ? undefined : this.flags[flag]) ?? this.env[envName];
  }

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** A whole number in `range` (inclusive), or the default when unset. */
  int(s: { flag?: string; env: string; dflt: number; range: [number, number] }): number {
    const v = this.pick(s.flag, s.env);
    if (v === undefined || v === '') return s.dflt;
    const n = Number(v);
    const [min, max] = s.range;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    this.problem(
      s.flag === undefined ? s.env : `--${s.flag} / ${s.env}`,
      `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`,
    );
    return s.dflt;
  }

  /** A true/false environment variable (also 1/0), true when unset. */
  bool(envName: string): boolean {
    const v = (this.env[envName] ?? 'true').toLowerCase();
    if (!['true', 'false', '1', '0'].includes(v)) this.problem(envName, `must be true or false, got ${JSON.stringify(this.env[envName])}`);
    return v === 'true' || v === '1';
  }
}

/** Configuration from environment variables and flags (flags win), validated at once: every problem is listed in one `invalid_input`. */
export function loadConfig(env: NodeJS.ProcessEnv, flags: Record<string, string | undefined> = {}): Config {
  const r = new SettingReader(env, flags);
  const store = r.pick('store', 'BRANCHGRAPH_STORE') ?? 'file://./data';
  try {
    parseStoreUrl(store, env);
  } catch (e) {
    r.problem('--store / BRANCHGRAPH_STORE', (e as Error).message);
  }
  const { tokens, problems: tokenProblems } = parseTokens(r.pick('tokens', 'BRANCHGRAPH_TOKENS'));
  for (const p of tokenProblems) r.problem('--tokens / BRANCHGRAPH_TOKENS', p);
  const level = r.pick('log-level', 'LOG_LEVEL') ?? 'info';
  if (!(LEVELS as readonly string[]).includes(level)) r.problem('--log-level / LOG_LEVEL', `must be one of ${LEVELS.join(', ')}`);
  const width = r.int({ flag: 'merge-width', env: 'BRANCHGRAPH_MERGE_WIDTH', dflt: 1, range: [1, 4] });
  if (![1, 2, 4].includes(width)) r.problem('--merge-width / BRANCHGRAPH_MERGE_WIDTH', 'must be 1, 2 or 4');
  const shard = r.pick('shard', 'BRANCHGRAPH_SHARD') ?? defaultShard();
  if (!isValidShard(shard)) {
    r.problem(
      '--shard / BRANCHGRAPH_SHARD',
      `must be 1-64 letters, digits, '.', '_' or '-', and not a reserved name such as constructor, got ${JSON.stringify(shard)}`,
    );
  }
  const config: Config = {
    store,
    host: r.pick('host', 'HOST') ?? '127.0.0.1',
    port: r.int({ flag: 'port', env: 'PORT', dflt: 8080, range: [0, 65535] }),
    tokens,
    actor: r.pick('actor', 'BRANCHGRAPH_ACTOR') ?? os.hostname(),
    logLevel: level as Config['logLevel'],
    mergeWidth: width as 1 | 2 | 4,
    budgetBytes: r.int({
      flag: 'budget-bytes',
      env: 'BRANCHGRAPH_PREP_BUDGET_BYTES',
      dflt: DEFAULT_BUDGET_BYTES,
      range: [1, Number.MAX_SAFE_INTEGER],
    }),
    storeLatencyMs: r.int({ flag: 'store-latency-ms', env: 'BRANCHGRAPH_STORE_LATENCY_MS', dflt: 0, range: [0, 60_000] }),
    maxBodyBytes: r.int({ flag: 'max-body-bytes', env: 'BRANCHGRAPH_MAX_BODY_BYTES', dflt: LIMITS.maxBodyBytes, range: [1024, 1 << 30] }),
    maxIngestBytes: r.int({
      flag: 'max-ingest-bytes',
      env: 'BRANCHGRAPH_MAX_INGEST_BYTES',
      dflt: DEFAULT_MAX_INGEST_BYTES,
      range: [1024, Number.MAX_SAFE_INTEGER],
    }),
    drainTimeoutMs: r.int({ flag: 'drain-timeout-ms', env: 'BRANCHGRAPH_DRAIN_TIMEOUT_MS', dflt: 10_000, range: [0, 3_600_000] }),
    shard,
    sealAfterMs: r.int({ flag: 'seal-after-ms', env: 'WAL_SEAL_AFTER_MS', dflt: DEFAULT_SEAL_AFTER_MS, range: [1, 3_600_000] }),
    generationRows: r.int({ flag: 'generation-rows', env: 'WAL_GENERATION_ROWS', dflt: DEFAULT_GENERATION_ROWS, range: [1, 1_000_000] }),
    catchUp: catchUpSettings(r),
    compaction: {
      background: r.bool('COMPACTION_BACKGROUND'),
      delayMs: r.int({ env: 'COMPACTION_DELAY_MS', dflt: DEFAULT_COMPACTION_SETTINGS.delayMs, range: [0, 3_600_000] }),
      inline: r.bool('COMPACTION_INLINE'),
    },
    manifestPartBytes: manifestPartBytes(r, env),
    hooks: hookSettings(r),
    hookRefreshMs: r.int({ env: 'HOOK_REFRESH_MS', dflt: 5000, range: [0, 3_600_000] }),
    expiry: {
      intervalMs: r.int({ env: 'BRANCH_EXPIRY_INTERVAL_MS', dflt: DEFAULT_EXPIRY_SETTINGS.intervalMs, range: [0, 86_400_000] }),
    },
    embedder: embedderSettings(r),
    corsOrigins: corsOrigins(r),
    advertiseUrl: advertiseUrl(r),
  };
  if (r.problems.length > 0) {
    const lines = r.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n');
    throw new BranchgraphError('invalid_input', `invalid configuration:\n${lines}`, { issues: r.problems });
  }
  return config;
}

/** Leaf size of manifest part trees, when set; the engine's defaults otherwise. */
function manifestPartBytes(r: SettingReader, env: NodeJS.ProcessEnv): number | undefined {
  if (env.MANIFEST_PART_BYTES === undefined || env.MANIFEST_PART_BYTES === '') return undefined;
  return r.int({ env: 'MANIFEST_PART_BYTES', dflt: 0, range: [64, 1 << 20] });
}

/** An http(s) URL with no query or fragment, where `{port}` may stand for the listening port. */
function advertiseUrl(r: SettingReader): string | undefined {
  const url = r.pick('advertise-url', 'BRANCHGRAPH_ADVERTISE_URL');
  if (url === undefined || url === '') return undefined;
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(url))
    r.problem('--advertise-url / BRANCHGRAPH_ADVERTISE_URL', `${JSON.stringify(url)} is not an http(s) URL such as http://10.0.0.5:{port}`);
  return url.replace(/\/$/, '');
}

/** `*`, or origins as a browser sends them: a scheme, a host and an optional port, nothing more. */
function corsOrigins(r: SettingReader): string[] {
  const list = (r.pick('cors-origins', 'BRANCHGRAPH_CORS_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of list)
    if (o !== '*' && !/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(o))
      r.problem(
        '--cors-origins / BRANCHGRAPH_CORS_ORIGINS',
        `${JSON.stringify(o)} is not an origin such as https://app.example:8443, or *`,
      );
  return list;
}

function embedderSettings(r: SettingReader): EmbedderSettings {
  const embedder = r.pick('embedder', 'BRANCHGRAPH_EMBEDDER') ?? 'local';
  const problem = embedderProblem(embedder);
  if (problem !== undefined) r.problem('--embedder / BRANCHGRAPH_EMBEDDER', `${problem}, got ${JSON.stringify(embedder)}`);
  return {
    embedder,
    embedderKey: r.pick(undefined, 'BRANCHGRAPH_EMBEDDER_KEY'),
    embedderModel: r.pick(undefined, 'BRANCHGRAPH_EMBEDDER_MODEL'),
  };
}

function hookSettings(r: SettingReader): HookSettings {
  const d = DEFAULT_HOOK_SETTINGS;
  const allowlist = (r.pick('hook-allowlist', 'BRANCHGRAPH_HOOK_ALLOWLIST') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  for (const h of allowlist)
    if (!/^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(h))
      r.problem('--hook-allowlist / BRANCHGRAPH_HOOK_ALLOWLIST', `${JSON.stringify(h)} is not a host, host:port or *.domain`);
  return {
    allowlist,
    timeoutMs: r.int({ env: 'HOOK_TIMEOUT_MS', dflt: d.timeoutMs, range: [1, 600_000] }),
    retry: {
      maxAttempts: r.int({ env: 'HOOK_MAX_ATTEMPTS', dflt: d.retry.maxAttempts, range: [1, 100] }),
      baseMs: r.int({ env: 'HOOK_RETRY_BASE_MS', dflt: d.retry.baseMs, range: [1, 3_600_000] }),
      maxMs: r.int({ env: 'HOOK_RETRY_MAX_MS', dflt: d.retry.maxMs, range: [1, 86_400_000] }),
    },
    queueLimit: r.int({ env: 'HOOK_QUEUE_LIMIT', dflt: d.queueLimit, range: [1, 1_000_000] }),
    concurrency: r.int({ env: 'HOOK_CONCURRENCY', dflt: d.concurrency, range: [1, 256] }),
  };
}

function catchUpSettings(r: SettingReader): Config['catchUp'] {
  const d = DEFAULT_CATCHUP_SETTINGS;
  const big = Number.MAX_SAFE_INTEGER;
  return {
    pipeline: r.bool('CATCHUP_PIPELINE_ENABLED'),
    maxGenerations: r.int({ env: 'CATCHUP_MERGE_MAX_GENERATIONS', dflt: d.maxGenerations, range: [0, 1_000_000] }),
    maxBytes: r.int({ env: 'CATCHUP_MAX_BYTES', dflt: d.maxBytes, range: [1, big] }),
    budgetBytes: r.int({ env: 'CATCHUP_MEMORY_BUDGET_BYTES', dflt: d.budgetBytes, range: [1, big] }),
    triggerGenerations: r.int({ env: 'CATCHUP_TRIGGER_GENERATIONS', dflt: d.triggerGenerations, range: [0, 1_000_000] }),
    intervalMs: r.int({ env: 'CATCHUP_INTERVAL_MS', dflt: d.intervalMs, range: [10, 3_600_000] }),
  };
}
