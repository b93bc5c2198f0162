/**
 * One entity at a ref: its properties with who last set each (blame), its edges in both
 * directions with the node at the other end one click away, its neighbourhood drawn as a graph
 * that grows as nodes are clicked, and its history, newest first, with the changed properties.
 * On a branch, a property is edited in place like a table cell.
 */
import { answer, api, failureText } from '../shared/api.js';
import { button, cell, h, replace, short, statusBox, tableOf, valueText, when } from '../shared/dom.js';
import { editOutcome } from './edit-outcome.js';
import { makeEdit } from './edits.js';
import type { ExplorerContext } from './explorer-context.js';
import { parseCell } from './filters.js';
import { graphView } from './graph-view.js';
import type { Route } from './route.js';
import { columnsOf, isKeyProp, tableOf as findTable, type TableType } from './schema-info.js';

export async function entityView(view: HTMLElement, ctx: ExplorerContext, route: Extract<Route, { view: 'entity' }>): Promise<void> {
  const t = findTable(ctx.info, route.table);
  if (t === undefined) return replace(view, statusBox('bad', `not_found: table ${route.table} does not exist at ${ctx.at}`));
  const { key } = route;
  const params = { path: { table: t.name, key }, query: { at: ctx.pinned } };
  // Each part is read on its own and drawn when it arrives, in the order a reader looks.
  const parts = { props: 'Properties', graph: 'Neighbourhood', edges: 'Edges', history: 'History' } as const;
  const reading = (k: keyof typeof parts) => h('div', { id: `entity-${k}` }, [h('p', { class: 'muted', text: 'Reading…' })]);
  const box = { props: reading('props'), graph: reading('graph'), edges: reading('edges'), history: reading('history') };
  replace(
    view,
    h('h2', { id: 'view-title', tabindex: -1, text: `${t.name} ${key}` }),
    h('p', { class: 'muted' }, [
      `at ${ctx.at} (${ctx.pinned.slice(7, 17)}) · `,
      button(`all ${t.name}`, () => ctx.go({ view: 'table', at: ctx.at, table: t.name }), { class: 'link' }),
    ]),
    ...(Object.keys(parts) as (keyof typeof parts)[]).flatMap((k) => [h('h3', { text: parts[k] }), box[k]]),
  );
  const open = (table: string, k: string) => ctx.go({ view: 'entity', at: ctx.at, table, key: k });
  await Promise.all([
    answer(api().GET('/tables/{table}/rows/{key}/blame', { params })).then(
      (b) => replace(box.props, propertiesTable(ctx, t, { key, row: b.row, properties: b.properties })),
      (e: unknown) => replace(box.props, statusBox('bad', failureText(e), 'entity-error')),
    ),
    t.kind === 'node'
      ? answer(
          api().GET('/tables/{table}/rows/{key}/edges', { params: { ...params, query: { ...params.query, direction: 'both' } } }),
        ).then(
          (r) => replace(box.edges, edgesTable(ctx, t, { key, edges: r.edges, open })),
          (e: unknown) => replace(box.edges, statusBox('bad', failureText(e))),
        )
      : Promise.resolve(replace(box.edges, h('p', { class: 'muted', text: 'An edge has no edges of its own.' }))),
    answer(api().GET('/tables/{table}/rows/{key}/history', { params: { ...params, query: { ...params.query, limit: 50 } } })).then(
      (r) => replace(box.history, historyTable(r.versions, r.nextCursor !== null)),
      (e: unknown) => replace(box.history, statusBox('bad', failureText(e))),
    ),
  ]);
  if (t.kind === 'node') {
    const g = graphView(box.graph, { info: ctx.info, at: ctx.pinned, onOpen: open });
    try {
      const r = await answer(
        api().POST('/walks/neighborhood', { body: { at: ctx.pinned, from: { table: t.name, key }, hops: 1, first: 200 } }),
      );
      g.add(r.nodes, r.edges);
    } catch (e) {
      box.graph.append(statusBox('bad', failureText(e)));
    }
  } else replace(box.graph, h('p', { class: 'muted', text: 'Open either end to see its neighbourhood.' }));
}

type Blamed = { property: string; value: unknown; commit: { id: string; author: string; time: string; message: string } | null };

function propertiesTable(
  ctx: ExplorerContext,
  t: TableType,
  e: { key: string; row: Record<string, unknown>; properties: Blamed[] },
): HTMLElement {
  const blame = new Map(e.properties.map((p) => [p.property, p.commit]));
  const rows = columnsOf(t).map((p) => {
    const c = blame.get(p.name) ?? null;
    const value = cell(e.row[p.name], p.type.kind === 'string' && String(e.row[p.name] ?? '').length > 80 ? 'text' : 'v');
    if (ctx.point && !isKeyProp(t, p.name)) {
      const edit = button(
        'Edit',
        () => {
          const input = h('input', { 'aria-label': `new ${p.name}`, value: valueText(e.row[p.name]) });
          replace(value, input);
          input.focus();
          input.addEventListener('keydown', (k) => {
            if (k.key === 'Escape') ctx.reload();
            if (k.key !== 'Enter') return;
            void (async () => {
              try {
                const key = Object.fromEntries(Object.entries(e.row).filter(([name]) => isKeyProp(t, name)));
                const point = ctx.point as NonNullable<ExplorerContext['point']>;
                const set = { [p.name]: parseCell(p, input.value) };
                await editOutcome(ctx, await makeEdit(point, ctx.info, { table: t, edit: { kind: 'update', key, set } }));
              } catch (err) {
                value.append(statusBox('bad', failureText(err), 'edit-error'));
              }
            })();
          });
        },
        { 'aria-label': `edit ${p.name}` },
      );
      return h('tr', { 'data-prop': p.name }, [cell(p.name), value, blameCell(c), h('td', {}, [edit])]);
    }
    return h('tr', { 'data-prop': p.name }, [cell(p.name), value, blameCell(c), h('td')]);
  });
  return tableOf(['property', 'value', 'last set by', ''], rows, { id: 'properties' });
}

function blameCell(c: Blamed['commit']): HTMLTableCellElement {
  if (c === null) return cell('(older than the history read)');
  return h('td', { title: c.message }, [`${c.author} · ${short(c.id)} · ${when(c.time)}`]);
}

function edgesTable(
  ctx: ExplorerContext,
  t: TableType,
  e: { key: string; edges: { table: string; key: string; row: Record<string, unknown> }[]; open: (table: string, key: string) => void },
): HTMLElement {
  if (e.edges.length === 0) return h('p', { class: 'muted', text: 'No edges.' });
  const rows = e.edges.map((edge) => {
    const et = findTable(ctx.info, edge.table);
    const out = edge.row.from === e.key && et?.kind === 'edge' && et.from === t.name;
    const other = out ? String(edge.row.to) : String(edge.row.from);
    const otherTable = et?.kind === 'edge' ? (out ? et.to : et.from) : '';
    const props = Object.entries(edge.row)
      .filter(([k]) => k !== 'from' && k !== 'to')
      .map(([k, v]) => `${k}: ${valueText(v)}`)
      .join(', ');
    return h('tr', { 'data-edge': `${edge.table} ${edge.key}` }, [
      cell(out ? 'out →' : '← in'),
      cell(edge.table),
      h('td', {}, [button(`${otherTable} ${other}`, () => e.open(otherTable, other), { class: 'link' })]),
      cell(props),
    ]);
  });
  return tableOf(['direction', 'edge', 'other end', 'properties'], rows, { id: 'edges' });
}

function historyTable(
  versions: { commit: { id: string; author: string; time: string; message: string }; change: string; changed: string[] }[],
  more: boolean,
): HTMLElement {
  const rows = versions.map((v) =>
    h('tr', { 'data-commit': v.commit.id }, [
      cell(short(v.commit.id), 'v'),
      cell(v.change),
      cell(v.changed.join(', ')),
      cell(v.commit.author),
      cell(v.commit.message),
      cell(when(v.commit.time)),
    ]),
  );
  return h('div', {}, [
    tableOf(['commit', 'change', 'properties', 'author', 'message', 'when'], rows, { id: 'history' }),
    more ? h('p', { class: 'muted', text: 'The newest 50 versions are shown.' }) : null,
  ]);
}
