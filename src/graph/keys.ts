/**
 * The object key layout of one graph in a store. Every published object is
 * written once at a new key; only `hint` and `publishers/` objects (hints of
 * another kind) are ever overwritten.
 *
 *   branches/<name>/<seq>.json         branch records (create, delete), seq 8 digits
 *   manifests/<lineage>/<version>.json manifests, version 12 digits
 *   hints/<lineage>.json               best-effort latest version of a lineage
 *   hints/branches/<name>.json         best-effort head of a branch, with its record
 *   commits/<commitId>.json            commit id → manifest location
 *   schemas/<hash>.json                schemas, content-addressed
 *   parts/<ulid>.json                  manifest part tree nodes (tables, ancestry)
 *   runs/<table>/<ulid>.arrow          table runs
 *   runs/<table>/<ulid>.rows.json      table runs of a few rows (compact)
 *   runs/<table>/<ulid>.json           index of a segmented run, whose segments are
 *   runs/<table>/<ulid>/<n>.arrow      its segment files
 *   runs/<table>/<ulid>.replaced.json  the runs a compacted run replaced
 *   wal/...                            ingest generations (see src/wal)
 *   idempotency/<day>/<hash>.json      keyed merges' results, by UTC day (graph/idempotency.ts)
 *   requests/<id>/<seq>.json           merge requests, one create-only object per version (graph/merge-requests.ts)
 *   events/<seq>.json, <seq>.ok        the event log and its confirmations (graph/event-log.ts)
 *   hooks/<id>.json                    registered webhooks and checks (graph/hooks.ts)
 *   hook-dead-letters/<id>.json        deliveries that never landed (graph/hooks.ts)
 *   remotes/<name>.json                a remote: where another copy of the graph is (graph/remotes.ts)
 *   remote-refs/<remote>/<branch>.json a remote's branch as the last fetch found it (graph/remotes.ts)
 *   publishers/<branch>.json           the server that publishes a branch's merges for the others (graph/branch-publishers.ts)
 *
 * Branch names are percent-encoded into one segment, so `review` and
 * `review/2026-07` never share a prefix.
 */

export const BRANCH_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._\-/]{0,199}$/;

export function encodeBranch(name: string): string {
  return encodeURIComponent(name).replace(/\./g, '%2E');
}

/** How a compact run's key ends (table/run.ts). */
export const COMPACT_RUN_SUFFIX = '.rows.json';

export const keys = {
  branchPrefix: (name: string): string => `branches/${encodeBranch(name)}/`,
  branchRecord: (name: string, seq: number): string => `branches/${encodeBranch(name)}/${String(seq).padStart(8, '0')}.json`,
  allBranches: (): string => 'branches/',
  manifestPrefix: (lineage: string): string => `manifests/${lineage}/`,
  manifest: (lineage: string, version: number): string => `manifests/${lineage}/${String(version).padStart(12, '0')}.json`,
  hint: (lineage: string): string => `hints/${lineage}.json`,
  /** Where a branch's head was last published: read in parallel with the branch's records. */
  branchHint: (name: string): string => `hints/branches/${encodeBranch(name)}.json`,
  /** Which server publishes a branch's merges for the others (branch-publishers.ts). */
  branchPublisher: (name: string): string => `publishers/${encodeBranch(name)}.json`,
  commit: (id: string): string => `commits/${id}.json`,
  /** Where the index entries of every commit id starting with `prefix` are listed. */
  commitsStartingWith: (prefix: string): string => `commits/${prefix}`,
  schema: (hash: string): string => `schemas/${hash}.json`,
  /** A node of a manifest's table or ancestry tree, shared by every manifest that did not change it. */
  part: (id: string): string => `parts/${id}.json`,
  run: (table: string, id: string): string => `runs/${table}/${id}.arrow`,
  /** A run of a few rows, stored as compact JSON (table/run.ts). */
  compactRun: (table: string, id: string): string => `runs/${table}/${id}${COMPACT_RUN_SUFFIX}`,
  runIndex: (table: string, id: string): string => `runs/${table}/${id}.json`,
  runSegment: (table: string, id: string, n: number): string => `runs/${table}/${id}/${String(n).padStart(6, '0')}.arrow`,
  /** The runs a compacted run replaced, oldest first. */
  runReplaced: (table: string, id: string): string => `runs/${table}/${id}.replaced.json`,
  /** The search segment of one run under one search spec (derived: rebuilt whenever it is missing). */
  searchSegment: (runKey: string, spec: string): string => `search/${runKey}@${spec}`,
};

/**
 * Where an acknowledged change becomes visible: a create-only write (or a deletion, for tags) under
 * one of these is what a client is told succeeded. A hosted graph checks that it still exists
 * after each of them (service/live-graph-store.ts); runs, parts and hints are invisible until a
 * manifest names them.
 */
export const PUBLICATION_PREFIXES = [
  'manifests/',
  'branches/',
  'tags/',
  'wal/',
  'idempotency/',
  'requests/',
  'events/',
  'hooks/',
  'remotes/',
  'remote-refs/',
] as const;

/** The prefixes garbage collection scans, one per kind of object it may delete. */
export const COLLECTABLE_PREFIXES = {
  manifests: 'manifests/',
  runs: 'runs/',
  commits: 'commits/',
  hints: 'hints/',
  parts: 'parts/',
  wal: 'wal/',
  idempotency: 'idempotency/',
  deadLetters: 'hook-dead-letters/',
  search: 'search/',
} as const;

/** What a key of a collectable kind names; undefined for a key outside the layout. */
export type ParsedKey =
  | { kind: 'manifest'; lineage: string; version: number }
  | { kind: 'run'; table: string; id: string }
  | { kind: 'commit'; id: string }
  | { kind: 'hint'; lineage: string }
  | { kind: 'branchHint'; name: string }
  | { kind: 'part'; id: string }
  /** A search segment, derived from the run it names. */
  | { kind: 'searchSegment'; run: string };

export function parseKey(key: string): ParsedKey | undefined {
  const parts = key.split('/');
  switch (parts[0]) {
    case 'manifests': {
      const version = versionOfManifestKey(key);
      return parts.length === 3 && version !== undefined ? { kind: 'manifest', lineage: parts[1] as string, version } : undefined;
    }
    case 'runs': {
      // runs/<table>/<id>.arrow | runs/<table>/<id>.rows.json | runs/<table>/<id>.json | runs/<table>/<id>/<n>.arrow
      const id = /^[^./]+/.exec(parts[2] ?? '')?.[0];
      return (parts.length === 3 || parts.length === 4) && id !== undefined ? { kind: 'run', table: parts[1] as string, id } : undefined;
    }
    case 'commits':
      return parts.length === 2 && parts[1]?.endsWith('.json')
        ? { kind: 'commit', id: (parts[1] as string).slice(0, -'.json'.length) }
        : undefined;
    case 'search': {
      const at = key.lastIndexOf('@');
      return at > 'search/'.length ? { kind: 'searchSegment', run: key.slice('search/'.length, at) } : undefined;
    }
    case 'parts':
      return parts.length === 2 && parts[1]?.endsWith('.json')
        ? { kind: 'part', id: (parts[1] as string).slice(0, -'.json'.length) }
        : undefined;
    case 'hints': {
      if (parts.length === 3 && parts[1] === 'branches' && parts[2]?.endsWith('.json')) {
        const name = decodeBranchSegment((parts[2] as string).slice(0, -'.json'.length));
        return name === undefined ? undefined : { kind: 'branchHint', name };
      }
      return parts.length === 2 && parts[1]?.endsWith('.json')
        ? { kind: 'hint', lineage: (parts[1] as string).slice(0, -'.json'.length) }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** Version number from a manifest key, or undefined for foreign keys. */
export function versionOfManifestKey(key: string): number | undefined {
  const m = /\/(\d{12})\.json$/.exec(key);
  return m === null ? undefined : Number(m[1]);
}

/** The branch name a `branches/<segment>/` key segment encodes, or undefined for a foreign one. */
export function decodeBranchSegment(segment: string): string | undefined {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return BRANCH_NAME_RE.test(name) && encodeBranch(name) === segment ? name : undefined;
}

export function seqOfBranchKey(key: string): number | undefined {
  const m = /\/(\d{8})\.json$/.exec(key);
  return m === null ? undefined : Number(m[1]);
}
