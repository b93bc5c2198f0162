/**
 * What a request brings, read pinned to a revision's heads (`commit:<id>`), so a reviewer sees
 * exactly what the revision would merge while the branches move: the commits the source brings,
 * and the three-dot diff of each side with the changed properties marked.
 */
import { answer, api, failureText, type Schemas } from '../shared/api.js';
import { button, cell, h, replace, short, statusBox, tableOf, when } from '../shared/dom.js';
import { isShown, type Revision } from './review-state.js';

type Row = Record<string, unknown>;
/** Comment on one place of the diff: the review form takes it. */
export type CommentOn = (table: string, key: string, property: string) => void;

export async function showCommits(box: HTMLElement, latest: Revision, gen: number): Promise<void> {
  try {
    const [theirs, mine] = await Promise.all([
      answer(api().GET('/commits', { params: { query: { limit: 1000, at: `commit:${latest.targetHead}` } } })),
      answer(api().GET('/commits', { params: { query: { limit: 200, at: `commit:${latest.sourceHead}` } } })),
    ]);
    if (!isShown(gen)) return;
    // The commits reachable from the source head and not from the target head, newest first.
    const known = new Set(theirs.commits.map((c) => c.id));
    const brings: Schemas['Commit'][] = [];
    for (const c of mine.commits) {
      if (c.id === latest.base) break;
      if (!known.has(c.id)) brings.push(c);
    }
    if (brings.length === 0) return replace(box, h('p', { class: 'muted', text: 'No commits.' }));
    const rows = brings.map((c) =>
      h('tr', { 'data-commit': c.id }, [cell(short(c.id), 'v'), cell(c.kind), cell(c.author), cell(c.message), cell(when(c.time))]),
    );
    replace(box, tableOf(['commit', 'kind', 'author', 'message', 'when'], rows));
  } catch (e) {
    if (isShown(gen)) replace(box, statusBox('bad', failureText(e)));
  }
}

/** Properties before and after, the changed ones marked (and named so for screen readers). */
export function propsTable(before: Row | null, after: Row | null, changed: string[]): HTMLTableElement {
  const names = [...new Set([...Object.keys(after ?? before ?? {}), ...Object.keys(before ?? {})])];
  return h(
    'table',
    { class: 'props' },
    names.map((n) => {
      const isChanged = changed.includes(n);
      return h('tr', { 'data-prop': n, class: isChanged ? 'chg' : undefined }, [
        h('td', {}, [n, isChanged ? h('span', { class: 'sr', text: ' (changed)' }) : null]),
        cell(before?.[n] ?? null),
        cell(after?.[n] ?? null),
      ]);
    }),
  );
}

type Change = { sign: '+' | '~' | '-'; key: string; before: Row | null; after: Row | null; changed: string[] };

/** One table's changes in key order, whatever their kind. */
function changesOf(t: Schemas['TableDiff']): Change[] {
  const changes: Change[] = [
    ...t.inserted.map((x) => ({ sign: '+' as const, key: x.key, before: null, after: x.row as Row, changed: Object.keys(x.row) })),
    ...t.updated.map((x) => ({ sign: '~' as const, key: x.key, before: x.before as Row, after: x.after as Row, changed: x.changed })),
    ...t.deleted.map((x) => ({ sign: '-' as const, key: x.key, before: x.row as Row, after: null, changed: Object.keys(x.row) })),
  ];
  return changes.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}

export async function showDiff(box: HTMLElement, sides: { from: string; to: string; gen: number; commentOn?: CommentOn }): Promise<void> {
  const { from, to, gen, commentOn } = sides;
  try {
    const d = await answer(
      api().GET('/diff', { params: { query: { mode: 'three-dot', limit: 200, from: `commit:${from}`, to: `commit:${to}` } } }),
    );
    if (!isShown(gen)) return;
    if (d.summary.length === 0) return replace(box, h('p', { class: 'muted', text: 'No changes.' }));
    const summary = tableOf(
      ['table', 'inserted', 'updated', 'deleted'],
      d.summary.map((s) => h('tr', {}, [cell(s.table), cell(s.inserted), cell(s.updated), cell(s.deleted)])),
    );
    const rows = d.tables.flatMap((t) =>
      changesOf(t).map((c) => {
        const cells = [cell(t.table), cell(`${c.sign} ${c.key}`, 'v'), h('td', {}, [propsTable(c.before, c.after, c.changed)])];
        if (commentOn !== undefined)
          cells.push(
            h('td', {}, [
              button('Comment', () => commentOn(t.table, c.key, c.changed.length === 1 ? (c.changed[0] ?? '') : ''), {
                'aria-label': `comment on ${t.table} ${c.key}`,
              }),
            ]),
          );
        return h('tr', { 'data-change': `${t.table} ${c.key}`, 'data-kind': c.sign }, cells);
      }),
    );
    const headers = ['table', 'change', 'properties (before, after; changed ones marked)', ...(commentOn !== undefined ? [''] : [])];
    replace(
      box,
      summary,
      tableOf(headers, rows),
      d.nextCursor ? h('p', { class: 'muted', text: 'The first 200 changes are shown.' }) : null,
    );
  } catch (e) {
    if (isShown(gen)) replace(box, statusBox('bad', failureText(e)));
  }
}
