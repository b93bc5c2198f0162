/**
 * Making an edit from the explorer. On an unprotected branch it is one typed mutation pinned to
 * the head the page read; if the branch moved since, nothing is written and the page says so and
 * offers a reload, never a silent overwrite. On a protected branch the same mutation goes to a
 * new branch made from that head, and a merge request proposes it, so the review decides.
 */
import { ApiError, answer, api, base, typedGraphql } from '../shared/api.js';
import { type Edit, editDocument } from './edit-document.js';
import type { SchemaInfo, TableType } from './schema-info.js';

/** What the page read: the branch and its head at the time. */
export interface ReadPoint {
  branch: string;
  head: string;
  /** Whether the branch asks for reviews: edits become proposals. */
  isProtected: boolean;
}

export type EditOutcome =
  | { kind: 'written'; commit: string }
  | { kind: 'proposed'; request: string; branch: string; url: string }
  | { kind: 'moved'; message: string };

const describe = (table: string, edit: Edit): string =>
  `${edit.kind} ${table}${edit.kind === 'create' ? '' : ` ${Object.values(edit.key).map(String).join(' → ')}`}`;

export async function makeEdit(at: ReadPoint, info: SchemaInfo, change: { table: TableType; edit: Edit }): Promise<EditOutcome> {
  const names = info.names.get(change.table.name);
  if (names === undefined) throw new Error(`no typed names for ${change.table.name}`);
  const message = `explorer: ${describe(change.table.name, change.edit)}`;
  const doc = editDocument({ table: change.table, names, expectedHead: at.head, message }, change.edit);
  if (at.isProtected) return propose(at, { doc, message });
  try {
    const r = await typedGraphql<{ edit: { commit: { id: string } | null } }>(at.branch, doc.query, doc.variables);
    return { kind: 'written', commit: r.edit.commit?.id ?? at.head };
  } catch (e) {
    if (e instanceof ApiError && e.code === 'head_moved') return { kind: 'moved', message: e.message };
    throw e;
  }
}

async function propose(
  at: ReadPoint,
  p: { doc: { query: string; variables: Record<string, unknown> }; message: string },
): Promise<EditOutcome> {
  const branch = `edit/${at.branch}-${Date.now().toString(36)}`;
  await answer(api().POST('/branches', { body: { name: branch, from: `commit:${at.head}` } }));
  await typedGraphql(branch, p.doc.query, p.doc.variables);
  const request = await answer(
    api().POST('/merge-requests', {
      body: { source: branch, target: at.branch, title: p.message, description: `Proposed from the explorer, read at ${at.head}.` },
    }),
  );
  return { kind: 'proposed', request: request.id, branch, url: `${base}/ui#request=${encodeURIComponent(request.id)}` };
}
