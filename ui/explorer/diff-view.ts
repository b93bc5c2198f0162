/**
 * What changed between two refs, drawn on the graph: added, removed and changed entities and
 * edges in distinct colours (a changed edge's unchanged ends drawn as grey context), with the
 * changed properties listed beside, before and after. Three-dot by default (what `to` changed
 * since it left `from`, which is what a merge of `to` would bring); two-dot on request.
 */
import { answer, api, failureText, type Schemas } from '../shared/api.js';
import { button, cell, h, labelled, replace, statusBox, tableOf, valueText } from '../shared/dom.js';
import type { DiffMark } from './diff-marks.js';
import type { ExplorerContext } from './explorer-context.js';
import { type GraphEdge, type GraphNode, graphView, nodeId } from './graph-view.js';
import type { Route } from './route.js';
import { tableOf as findTable, type SchemaInfo } from './schema-info.js';

/** Most changes one diff view draws. */
const LIMIT = 500;

export async function diffView(view: HTMLElement, ctx: ExplorerContext, route: Extract<Route, { view: 'diff' }>): Promise<void> {
  const from = h('input', { id: 'diff-from', value: route.from, size: 18 });
  const to = h('input', { id: 'diff-to', value: route.to, size: 18 });
  const mode = h('select', { id: 'diff-mode' }, [
    h('option', { value: 'three-dot', text: 'what "to" changed since they diverged (three-dot)' }),
    h('option', { value: 'two-dot', text: 'from "from" to "to" (two-dot)' }),
  ]);
  const show = button('Show diff', () => ctx.go({ view: 'diff', from: from.value, to: to.value }), { id: 'show-diff', class: 'primary' });
  const form = h('form', { class: 'row', 'aria-label': 'refs to compare' }, [
    labelled('from', from),
    labelled('to', to),
    labelled('mode', mode),
    show,
  ]);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    show.click();
  });
  const out = h('div', { id: 'diff-result' });
  replace(view, h('h2', { id: 'view-title', tabindex: -1, text: 'Compare refs' }), form, out);
  mode.addEventListener(
    'change',
    () => void draw(out, ctx, { from: from.value, to: to.value, mode: mode.value as 'two-dot' | 'three-dot' }),
  );
  if (route.to !== '') await draw(out, ctx, { from: route.from, to: route.to, mode: 'three-dot' });
}

async function draw(out: HTMLElement, ctx: ExplorerContext, q: { from: string; to: string; mode: 'two-dot' | 'three-dot' }): Promise<void> {
  replace(out, h('p', { class: 'muted', text: 'Reading the diff…' }));
  try {
    const d = await answer(api().GET('/diff', { params: { query: { from: q.from, to: q.to, mode: q.mode, limit: LIMIT } } }));
    const total = d.summary.reduce((n, s) => n + s.inserted + s.updated + s.deleted, 0);
    const summary = h('p', { id: 'diff-summary' }, [
      total === 0
        ? 'No changes.'
        : d.summary.map((s) => `${s.table}: +${s.inserted} ~${s.updated} −${s.deleted}`).join(' · ') +
          (d.nextCursor ? ` (the first ${LIMIT} changes are drawn)` : ''),
    ]);
    if (total === 0) return replace(out, summary);
    const graphBox = h('div', {});
    replace(out, summary, graphBox, h('h3', { text: 'Changed properties' }), changesTable(d.tables));
    const { nodes, edges } = marked(ctx.info, d.tables);
    const g = graphView(graphBox, {
      info: ctx.info,
      at: ctx.pinned,
      onOpen: (table, key) => ctx.go({ view: 'entity', at: q.to, table, key }),
      diff: true,
    });
    g.add(nodes, edges);
    g.add(...(await context(q.to, nodes)));
  } catch (e) {
    replace(out, statusBox('bad', failureText(e), 'diff-error'));
  }
}

type Change = {
  table: string;
  key: string;
  mark: DiffMark;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  changed: string[];
};

function changesOf(tables: Schemas['TableDiff'][]): Change[] {
  return tables.flatMap((t) => [
    ...t.inserted.map((x) => ({
      table: t.table,
      key: x.key,
      mark: 'added' as const,
      before: null,
      after: x.row as Record<string, unknown>,
      changed: [],
    })),
    ...t.updated.map((x) => ({
      table: t.table,
      key: x.key,
      mark: 'changed' as const,
      before: x.before as Record<string, unknown>,
      after: x.after as Record<string, unknown>,
      changed: x.changed,
    })),
    ...t.deleted.map((x) => ({
      table: t.table,
      key: x.key,
      mark: 'removed' as const,
      before: x.row as Record<string, unknown>,
      after: null,
      changed: [],
    })),
  ]);
}

/** The diff as graph elements: changed nodes and edges in their colours, and each edge's ends as context. */
function marked(info: SchemaInfo, tables: Schemas['TableDiff'][]): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const nodes = new Map<string, GraphNode>();
  const edges: GraphEdge[] = [];
  for (const c of changesOf(tables)) {
    const t = findTable(info, c.table);
    const row = c.after ?? c.before ?? {};
    if (t?.kind === 'node') nodes.set(nodeId(t.name, c.key), { table: t.name, key: c.key, row, mark: c.mark });
    else if (t?.kind === 'edge') {
      const from = String(row.from);
      const to = String(row.to);
      edges.push({ table: t.name, key: c.key, from, to, mark: c.mark });
      for (const [table, key] of [
        [t.from, from],
        [t.to, to],
      ] as const)
        if (!nodes.has(nodeId(table, key))) nodes.set(nodeId(table, key), { table, key, row: {}, mark: 'context' });
    }
  }
  // A node changed later in the list than an edge that named it as context keeps its own mark.
  return { nodes: [...nodes.values()], edges };
}

/** Most changed nodes whose neighbours are drawn around them, and neighbours drawn per node. */
const CONTEXT_NODES = 12;
const CONTEXT_NEIGHBOURS = 12;

/**
 * What surrounds the changed nodes at `to`, drawn grey: a few neighbours each and the edges to
 * them, so a change is seen where it sits in the graph. A node removed at `to` has none there.
 */
async function context(to: string, nodes: GraphNode[]): Promise<[GraphNode[], GraphEdge[]]> {
  const around = nodes.filter((n) => n.mark === 'added' || n.mark === 'changed').slice(0, CONTEXT_NODES);
  const walks = await Promise.all(
    around.map((n) =>
      answer(
        api().POST('/walks/neighborhood', { body: { at: to, from: { table: n.table, key: n.key }, hops: 1, first: CONTEXT_NEIGHBOURS } }),
      ).catch(() => ({ nodes: [], edges: [] })),
    ),
  );
  return [
    walks.flatMap((w) => w.nodes.map((x) => ({ ...x, mark: 'context' as const }))),
    walks.flatMap((w) => w.edges.map((x) => ({ ...x, mark: 'context' as const }))),
  ];
}

function changesTable(tables: Schemas['TableDiff'][]): HTMLElement {
  const rows = changesOf(tables).map((c) => {
    const props = c.mark === 'changed' ? c.changed : Object.keys(c.after ?? c.before ?? {});
    return h('tr', { class: `diff-${c.mark}`, 'data-change': `${c.table} ${c.key}`, 'data-kind': c.mark }, [
      cell(c.mark),
      cell(c.table),
      cell(c.key, 'v'),
      h(
        'td',
        { class: 'v' },
        props.map((p) =>
          h('div', { 'data-prop': p, text: `${p}: ${valueText(c.before?.[p] ?? null)} → ${valueText(c.after?.[p] ?? null)}` }),
        ),
      ),
    ]);
  });
  return tableOf(['change', 'table', 'key', 'properties (before → after)'], rows, { id: 'diff-changes' });
}
