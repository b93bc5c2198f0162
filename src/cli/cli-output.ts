/**
 * What commands print. `--json` prints the API's result as JSON for
 * programs; otherwise people get aligned tables for lists and `key: value`
 * lines for records, with long values cut to the terminal's width.
 */
import type {
  BranchDto,
  CommitDto,
  DiffResultDto,
  TagDto,
  IngestResultDto,
  MergeResultDto,
  SchemaApplyDto,
  WalStatusDto,
  WriteResultDto,
} from '../service/dtos.js';
import type { EntityVersionDto, PropertyBlameDto, RowItem } from '../service/api.js';
import type { MergeRequestDto } from '../service/review/request-dto.js';
import type { HookDto } from '../service/operations/hooks/hook-dto.js';
import type { CommitDetailDto } from '../service/dtos.js';

import type { z } from 'zod';
import type { FetchResultZ, PushResultZ, RemoteZ } from '../service/results/remote.js';

export interface Output {
  json: boolean;
  write(text: string): void;
}

const MAX_CELL = 60;

function cell(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  const line = s.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

/** An aligned table with a header row; an empty list says so. */
/** A fragment with its matched words in brackets. */
function marked(fragment: string, matches: readonly [number, number][]): string {
  let out = '';
  let at = 0;
  for (const [start, end] of matches) {
    out += `${fragment.slice(at, start)}[${fragment.slice(start, end)}]`;
    at = end;
  }
  return (out + fragment.slice(at)).replace(/\s+/g, ' ');
}

export function table(rows: readonly object[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((r) => columns.map((c) => cell((r as Record<string, unknown>)[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (vals: readonly string[]): string =>
    vals
      .map((v, i) => v.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`;
}

/** `key: value` lines; nested values as compact JSON. */
export function record(r: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(r).map((k) => k.length));
  return `${Object.entries(r)
    .map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v === null || v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('\n')}\n`;
}

export function print(out: Output, value: unknown, human: (v: never) => string = (v) => record(v as Record<string, unknown>)): void {
  out.write(out.json ? `${JSON.stringify(value, null, 2)}\n` : human(value as never));
}

const counts = (r: { inserted: number; updated: number; deleted: number; cascaded: number }): string =>
  `${r.inserted} inserted, ${r.updated} updated, ${r.deleted} deleted${r.cascaded > 0 ? ` (${r.cascaded} edges with their nodes)` : ''}`;

/** The hint for the next page of a walk: its cursor, with the commit to pin a moving ref to. */
const more = (cursor: string | null, pin: string): string => (cursor === null ? '' : `more: --cursor ${cursor} --at ${pin}\n`);

/** `1 operation`, `2 operations`. */
const many = (n: number, noun: string, nouns = `${noun}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? noun : nouns}`;

type FetchDto = z.infer<typeof FetchResultZ>;
type PushDto = z.infer<typeof PushResultZ>;
type RemoteDto = z.infer<typeof RemoteZ>;

export const human = {
  fetch: (r: FetchDto): string =>
    `fetched ${r.remote}: ${many(r.updated.length, 'branch', 'branches')} moved, ${many(r.transfer.objects, 'object')} (${r.transfer.bytes} bytes)\n` +
    r.updated.map((u) => `  remote:${r.remote}/${u.branch} ${u.from ?? '(new)'} -> ${u.to}\n`).join('') +
    (r.tags.kept.length > 0 ? `tags kept (they name other commits here): ${r.tags.kept.join(', ')}\n` : ''),
  push: (r: PushDto): string =>
    r.outcome === 'up_to_date'
      ? `${r.remote} already has ${r.destination} at ${r.to}\n`
      : `pushed ${r.branch} to ${r.remote} ${r.destination}: ${r.from ?? '(new)'} -> ${r.to} (${r.outcome}, ${many(r.transfer.objects, 'object')})\n`,
  remotes: (rs: RemoteDto[]): string =>
    table(
      rs.flatMap((r) =>
        r.branches.length === 0
          ? [{ remote: r.name, url: r.url, branch: '', commit: '' }]
          : r.branches.map((b) => ({ remote: r.name, url: r.url, branch: b.branch, commit: b.commit })),
      ),
      ['remote', 'url', 'branch', 'commit'],
    ),
  clone: (r: FetchDto & { branches: string[]; destination: string }): string =>
    `cloned ${many(r.branches.length, 'branch', 'branches')} and ${many(r.tags.fetched.length, 'tag')} into ${r.destination}: ${many(r.transfer.objects, 'object')} (${r.transfer.bytes} bytes)\n`,
  branch: (b: BranchDto): string => {
    const p = b.protection;
    const rule =
      p === null
        ? ''
        : `protected: ${many(p.requiredApprovals, 'approval')}${p.requiredChecks.length > 0 ? `, checks ${p.requiredChecks.join(', ')}` : ''}${p.allowAdminBypass ? ', admins may bypass' : ''}, stale on ${p.staleApprovals}\n`;
    return `branch ${b.name} at ${b.head.id}${b.forkedFrom !== null ? ` (from ${b.forkedFrom})` : ''}\n${rule}`;
  },
  request: (r: MergeRequestDto): string => {
    const head = `request ${r.id}: ${r.title} (${r.source} -> ${r.target}, ${r.state}, by ${r.author})\n`;
    const revs = table(
      r.revisions.map((v) => ({
        n: v.n,
        sourceHead: v.sourceHead,
        targetHead: v.targetHead,
        outcome: v.preview.outcome,
        conflicts: v.preview.conflicts,
        checks: Object.entries(v.checks ?? {})
          .map(([name, c]) => `${name}:${c.status}`)
          .join(' '),
      })),
      ['n', 'sourceHead', 'targetHead', 'outcome', 'conflicts', 'checks'],
    );
    const reviews =
      r.reviews.length === 0
        ? ''
        : table(
            r.reviews.map((v) => ({ ...v, on: v.on === undefined ? '' : [v.on.table, v.on.key, v.on.property].filter(Boolean).join(' ') })),
            ['author', 'verdict', 'revision', 'on', 'body'],
          );
    const m = r.mergeability;
    const state = r.state !== 'open' ? '' : m.mergeable ? 'mergeable\n' : `not mergeable: ${m.reasons.join('; ')}\n`;
    return `${head}${revs}${reviews}${state}`;
  },
  hooks: (p: { hooks: HookDto[] }): string =>
    p.hooks.length === 0
      ? 'no hooks\n'
      : table(
          p.hooks.map((h) => ({
            id: h.id,
            kind: h.kind,
            url: h.url,
            what: h.kind === 'check' ? (h.check ?? '') : h.events.join(','),
            delivered: h.stats.delivered,
            dead: h.stats.deadLetters,
          })),
          ['id', 'kind', 'url', 'what', 'delivered', 'dead'],
        ),
  deadLetters: (p: {
    deadLetters: { id: string; hook: string; event: string; attempts: number; error: string }[];
    nextCursor: string | null;
  }): string =>
    `${p.deadLetters.length === 0 ? 'no dead letters\n' : table(p.deadLetters, ['id', 'hook', 'event', 'attempts', 'error'])}${p.nextCursor === null ? '' : `more: --cursor ${p.nextCursor}\n`}`,
  requests: (p: { requests: MergeRequestDto[]; nextCursor: string | null }): string =>
    `${table(
      p.requests.map((r) => ({
        id: r.id,
        state: r.state,
        source: r.source,
        target: r.target,
        author: r.author,
        mergeable: r.mergeability.mergeable,
        title: r.title,
      })),
      ['id', 'state', 'source', 'target', 'author', 'mergeable', 'title'],
    )}${p.nextCursor === null ? '' : `more: --cursor ${p.nextCursor}\n`}`,
  write: (r: WriteResultDto): string => (r.commit === null ? 'nothing changed\n' : `committed ${r.commit.id}: ${counts(r)}\n`),
  ingest: (r: IngestResultDto): string =>
    `${many(r.operations, 'operation')} acknowledged in ${many(r.generations.length, 'generation')} on shard ${r.shard}: ${counts(r)}\n`,
  schema: (r: SchemaApplyDto): string =>
    `${r.commit === null ? 'the schema was already this' : `applied as ${r.commit.id}`}\n${table(
      Object.entries(r.tables).map(([name, action]) => ({ table: name, action })),
      ['table', 'action'],
    )}`,
  branches: (bs: BranchDto[]): string =>
    table(
      bs.map((b) => ({ name: b.name, head: b.head.id, kind: b.head.kind, time: b.head.time, message: b.head.message })),
      ['name', 'head', 'kind', 'time', 'message'],
    ),
  tags: (ts: TagDto[]): string => table(ts, ['name', 'commit', 'time', 'actor', 'message']),
  commits: (cs: CommitDto[]): string =>
    table(
      cs.map((c) => ({ ...c, author: c.author })),
      ['id', 'kind', 'time', 'author', 'message'],
    ),
  log: (p: { commits: CommitDto[]; nextCursor: string | null; at: string }): string =>
    `${human.commits(p.commits)}${more(p.nextCursor, `commit:${p.at}`)}`,
  history: (h: { at: string; versions: EntityVersionDto[]; nextCursor: string | null }): string => {
    const rows = h.versions.map((v) => ({
      commit: v.commit.id,
      time: v.commit.time,
      author: v.commit.author,
      change: v.change,
      changed: v.changed.map((p) => `${p}: ${cell(v.before?.[p] ?? null)} → ${cell(v.after?.[p] ?? null)}`).join(', '),
      message: v.commit.message,
    }));
    return `${table(rows, ['commit', 'time', 'author', 'change', 'changed', 'message'])}${more(h.nextCursor, `commit:${h.at}`)}`;
  },
  mergeBase: (r: { bases: string[] }): string => r.bases.map((id) => `${id}\n`).join(''),
  blame: (b: { properties: PropertyBlameDto[]; complete: boolean }): string =>
    `${table(
      b.properties.map((p) => ({
        property: p.property,
        value: p.value,
        commit: p.commit?.id ?? '?',
        time: p.commit?.time ?? '',
        author: p.commit?.author ?? '',
        message: p.commit?.message ?? '',
      })),
      ['property', 'value', 'commit', 'time', 'author', 'message'],
    )}${b.complete ? '' : 'the walk stopped before reaching every property (?)\n'}`,
  commit: (c: CommitDetailDto): string => {
    const resolved =
      c.resolved !== undefined
        ? `\nresolved ${c.resolved.total} conflict(s)${c.resolved.strategy ? `, ${c.resolved.strategy} where no choice named one` : ''}:\n${table(c.resolved.items, ['table', 'key', 'property', 'kind', 'take', 'by'])}`
        : '';
    return `${record({ id: c.id, kind: c.kind, branch: c.branch, parents: c.parents.join(' '), author: c.author, actor: c.actor, time: c.time, message: c.message })}\n${table(c.tables, ['name', 'rows', 'runs'])}${resolved}`;
  },
  rows: (page: { items: RowItem[]; nextCursor: string | null }): string => {
    const columns = ['key', ...new Set(page.items.flatMap((i) => Object.keys(i.row)))];
    const rows = page.items.map((i) => ({ key: i.key, ...i.row }));
    return `${table(rows, columns)}${page.nextCursor !== null ? `more: --cursor ${page.nextCursor}\n` : ''}`;
  },
  search: (r: {
    hits: {
      key: string;
      score: number;
      bm25: number | null;
      distance: number | null;
      highlights: { property: string; fragment: string; matches: [number, number][] }[];
    }[];
  }): string => {
    if (r.hits.length === 0) return 'no hits\n';
    const n = (x: number | null): string => (x === null ? '' : x.toFixed(4));
    const lines = r.hits.flatMap((h, i) => [
      `${i + 1}. ${h.key}  score ${n(h.score)}${h.bm25 === null ? '' : `  bm25 ${n(h.bm25)}`}${h.distance === null ? '' : `  distance ${n(h.distance)}`}`,
      ...h.highlights.map((l) => `   ${l.property}: ${marked(l.fragment, l.matches)}`),
    ]);
    return `${lines.join('\n')}\n`;
  },
  neighborhood: (r: { nodes: { table: string; key: string; depth: number }[]; edges: unknown[]; truncated: boolean }): string =>
    `${table(r.nodes, ['depth', 'table', 'key'])}${r.edges.length} edges${r.truncated ? '; truncated at --first' : ''}\n`,
  paths: (r: { paths: { nodes: { table: string; key: string }[]; edges: { table: string }[] }[]; hasMore: boolean }): string => {
    if (r.paths.length === 0) return 'no path\n';
    const line = (p: (typeof r.paths)[number]) =>
      p.nodes.map((n, i) => `${i === 0 ? '' : ` -${p.edges[i - 1]?.table}- `}${n.table}/${n.key}`).join('');
    return `${r.paths.map(line).join('\n')}\n${r.hasMore ? 'more: raise --first\n' : ''}`;
  },
  aggregate: (r: {
    count: number;
    numbers: Record<string, { count: number; min: number | null; max: number | null; sum: number | null; avg: number | null }>;
    groups: { key: Record<string, unknown>; count: number }[];
    source: string;
  }): string => {
    const numbers = Object.entries(r.numbers).map(([property, s]) => ({ property, ...s }));
    const groups = r.groups.map((g) => ({ ...g.key, count: g.count }));
    const groupColumns = [...new Set(r.groups.flatMap((g) => Object.keys(g.key))), 'count'];
    return `count ${r.count} (${r.source})\n${numbers.length > 0 ? table(numbers, ['property', 'count', 'min', 'max', 'sum', 'avg']) : ''}${groups.length > 0 ? table(groups, groupColumns) : ''}`;
  },
  diff: (d: DiffResultDto): string => {
    const head = d.mode === 'three-dot' ? `changes on ${d.to} since ${d.base} (merge base with ${d.from})\n` : '';
    if (d.summary.length === 0) return `${head}no changes\n`;
    const lines: string[] = [];
    const page = new Map(d.tables.map((t) => [t.table, t]));
    for (const s of d.summary) {
      lines.push(`${s.table}: ${s.inserted} inserted, ${s.updated} updated, ${s.deleted} deleted`);
      const t = page.get(s.table);
      if (t === undefined) continue;
      for (const r of t.inserted) lines.push(`  + ${r.key}  ${cell(r.row)}`);
      for (const u of t.updated)
        lines.push(`  ~ ${u.key}  ${u.changed.map((p) => `${p}: ${cell(u.before[p])} → ${cell(u.after[p])}`).join(', ')}`);
      for (const r of t.deleted) lines.push(`  - ${r.key}`);
    }
    if (d.nextCursor !== null) lines.push(`more: --cursor ${d.nextCursor} (with commit:${d.from} commit:${d.to} for the same state)`);
    return `${head}${lines.join('\n')}\n`;
  },
  merge: (r: MergeResultDto): string => {
    if (r.status === 'conflicts') {
      const items = r.report.items.map((c) => ({
        kind: c.kind,
        table: c.table,
        key: c.key,
        property: c.property,
        base: c.base,
        source: c.source,
        target: c.target,
      }));
      const more = r.report.nextCursor !== null ? `(${r.report.total - r.report.items.length} more; --json for the full report)\n` : '';
      return `conflicts: ${r.report.total}; nothing was published\n${table(items, ['kind', 'table', 'key', 'property', 'base', 'source', 'target'])}${more}`;
    }
    const resolved =
      r.resolved !== null
        ? `; ${r.resolved.total} conflict(s) resolved${r.resolved.strategy ? ` (${r.resolved.strategy} where no choice named one)` : ''}`
        : '';
    const head = r.dryRun ? `dry run: would be ${r.outcome}` : r.outcome;
    const tables = r.tables.length > 0 ? table(r.tables, ['table', 'action', 'sourceChanges', 'targetChanges', 'rowsWritten']) : '';
    return `${head}${r.commit !== null ? ` as ${r.commit.id}` : ''} (source ${r.sourceHead}, target ${r.targetHead})${resolved}\n${tables}`;
  },
  wal: (w: WalStatusDto): string =>
    `${record({ branch: w.branch, head: w.head, pendingGenerations: w.pendingGenerations, catchUpRunning: w.catchUp.running, lastCatchUp: w.catchUp.last?.outcome ?? null })}${table(
      w.shards.map((s) => ({ ...s, pendingRows: Object.values(s.pendingRows).reduce((a, b) => a + b, 0) })),
      ['shard', 'watermark', 'pendingGenerations', 'pendingRows', 'pendingBytes', 'oldestPendingStamp'],
    )}`,
};
