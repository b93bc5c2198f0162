/**
 * Server configuration from environment variables and command-line flags
 * (flags win), validated at boot. Every problem is listed at once, so an
 * operator fixes a bad deployment in one pass.
 */
import os from 'node:os';
import { BranchgraphError } from '../model/errors.js';
import { parseStoreUrl } from '../store/open-store.js';
import { parseTokens, type Role } from './auth.js';
import { LIMITS } from './inputs.js';

export interface Config {
  store: string;
  host: string;
  port: number;
  tokens: Map<string, Role>;
  actor: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  mergeWidth: 1 | 2 | 4;
  budgetBytes: number;
  storeLatencyMs: number;
  maxBodyBytes: number;
}

export const CONFIG_HELP = `
  --store URL          BRANCHGRAPH_STORE              file://./data (default), s3://bucket/prefix?endpoint=..., memory://
  --host HOST          HOST                           127.0.0.1
  --port N             PORT                           8080 (0 picks a free port)
  --tokens SPEC        BRANCHGRAPH_TOKENS             role:token,... with roles read, write, admin (unset: open)
  --actor NAME         BRANCHGRAPH_ACTOR              author recorded on commits (default: host name)
  --log-level LEVEL    LOG_LEVEL                      info
  --merge-width N      BRANCHGRAPH_MERGE_WIDTH        1, 2 or 4 for embedded and CLI merges (HTTP always uses 1)
  --budget-bytes N     BRANCHGRAPH_PREP_BUDGET_BYTES  preparation memory budget, default 134217728
  --store-latency-ms N BRANCHGRAPH_STORE_LATENCY_MS   inject latency per store call (benchmarks)
  --max-body-bytes N   BRANCHGRAPH_MAX_BODY_BYTES     default 16777216
`;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: NodeJS.ProcessEnv, flags: Record<string, string | undefined> = {}): Config {
  const problems: { path: string; message: string }[] = [];
  const pick = (flag: string, envName: string): string | undefined => flags[flag] ?? env[envName];
  const int = (flag: string, envName: string, dflt: number, min: number, max: number): number => {
    const v = pick(flag, envName);
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push({ path: `--${flag} / ${envName}`, message: `must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}` });
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
  const config: Config = {
    store,
    host: pick('host', 'HOST') ?? '127.0.0.1',
    port: int('port', 'PORT', 8080, 0, 65535),
    tokens,
    actor: pick('actor', 'BRANCHGRAPH_ACTOR') ?? os.hostname(),
    logLevel: level as Config['logLevel'],
    mergeWidth: width as 1 | 2 | 4,
    budgetBytes: int('budget-bytes', 'BRANCHGRAPH_PREP_BUDGET_BYTES', 128 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER),
    storeLatencyMs: int('store-latency-ms', 'BRANCHGRAPH_STORE_LATENCY_MS', 0, 0, 60_000),
    maxBodyBytes: int('max-body-bytes', 'BRANCHGRAPH_MAX_BODY_BYTES', LIMITS.maxBodyBytes, 1024, 1 << 30),
  };
  if (problems.length > 0) {
    throw new BranchgraphError('invalid_input', `invalid configuration:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`, { issues: problems });
  }
  return config;
}
