import { z } from 'zod';
import { canonicalJson } from '../../../model/canonical.js';
import { decodePageCursor, encodePageCursor } from '../../../model/page-cursor.js';
import { findType } from '../../../model/schema.js';
import type { Row } from '../../../model/values.js';
import type { Manifest } from '../../../graph/manifest.js';
import type { Snapshot } from '../../../graph/snapshot.js';
import { getRow } from '../../../graph/reads.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { commitDto, type CommitDto } from '../../dtos.js';
import type { BranchgraphService, RequestContext } from '../../service.js';

/** One version of an entity: the commit that made it, and what it did (inserted, updated with the properties it changed, deleted). */
export interface EntityVersion {
  commit: CommitDto;
  change: 'inserted' | 'updated' | 'deleted';
  before: Row | null;
  after: Row | null;
  changed: string[];
}

/** Commits one page walks at most: a page ends there even with fewer versions, and its cursor continues the walk. */
const MAX_WALK = 10_000;

/**
 * The versions of one entity reachable from a ref along first parents, newest first, a page at a
 * time: each commit whose row for the key differs from its first parent's. A walk reads one
 * manifest and one point lookup per commit, so its cost grows with the history it walks (at most
 * 10,000 commits a page), not with the table.
 */
export const entityHistory = defineOperation({
  name: 'entityHistory',
  summary: 'The versions of one entity along first parents, newest first, each with its commit and change.',
  role: 'read',
  input: z
    .object({
      table: tableName,
      key: entityKey,
      at: refOrMain,
      limit: z.number().int().min(1).max(1000).optional(),
      cursor: z.string().max(4096).optional(),
    })
    .strict(),
  async run(service, { table, key, at, limit = 100, cursor }, ctx): Promise<{ versions: EntityVersion[]; nextCursor: string | null }> {
    const head = await service.snapshot(at, ctx);
    // A cursor continues one walk: this entity from this ref's commit (model/page-cursor.ts).
    const scope = canonicalJson({ history: [table, key], from: head.manifest.commit.id });
    // Committed states only: the walk reads each commit's snapshot once, its row and its parent from it.
    const heads = service.graph.ports.heads;
    const at0 = cursor === undefined ? head.ref : position(cursor, scope);
    let snap: Snapshot | undefined = await heads.snapshotAt(at0, { signal: ctx.signal });
    const versions: EntityVersion[] = [];
    let after = await rowAt(service, { snap, table, key }, ctx);
    for (let walked = 0; snap !== undefined && versions.length < limit && walked < MAX_WALK; walked++) {
      const m: Manifest = snap.manifest;
      const parentRef = m.commit.kind === 'init' ? undefined : m.commit.parents[0];
      const parent: Snapshot | undefined = parentRef === undefined ? undefined : await heads.snapshotAt(parentRef, { signal: ctx.signal });
      const before: Row | null = parent === undefined ? null : await rowAt(service, { snap: parent, table, key }, ctx);
      const version = versionOf(m, before, after);
      if (version !== undefined) versions.push(version);
      [snap, after] = [parent, before];
    }
    const m = snap?.manifest;
    const nextCursor = m === undefined ? null : encodePageCursor('rows', scope, JSON.stringify({ lineage: m.lineage, version: m.version }));
    return { versions, nextCursor };
  },
  http: { method: 'GET', path: '/tables/{table}/rows/{key}/history' },
  graphql: [{ type: 'Query', field: 'history' }],
});

function position(cursor: string, scope: string): { lineage: string; version: number } {
  return JSON.parse(decodePageCursor('rows', scope, cursor)) as { lineage: string; version: number };
}

/** The entity's row in one commit (null where it, or its table, does not exist). */
function rowAt(service: BranchgraphService, at: { snap: Snapshot; table: string; key: string }, ctx: RequestContext): Promise<Row | null> {
  if (findType(at.snap.schema, at.table) === undefined) return Promise.resolve(null);
  return getRow({ tables: service.graph.ports.tables, snap: at.snap, table: at.table, key: at.key, signal: ctx.signal });
}

function versionOf(m: Manifest, before: Row | null, after: Row | null): EntityVersion | undefined {
  if (canonicalJson(before) === canonicalJson(after)) return undefined;
  const change = before === null ? 'inserted' : after === null ? 'deleted' : 'updated';
  const props = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  const changed = props.filter((p) => canonicalJson(before?.[p] ?? null) !== canonicalJson(after?.[p] ?? null));
  return { commit: commitDto(m.commit), change, before, after, changed };
}
