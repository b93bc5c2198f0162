/**
 * A table at a ref: typed columns, filters built from the schema, an order by any column, pages
 * of 50 with an exact count, and on a branch the edits: change a cell, add a row, delete a row,
 * each one mutation pinned to the head the page read (edits.ts).
 */
import { answer, api, failureText } from '../shared/api.js';
import { button, cell, h, labelled, replace, statusBox, valueText } from '../shared/dom.js';
import type { ExplorerContext } from './explorer-context.js';
import { editOutcome } from './edit-outcome.js';
import { makeEdit } from './edits.js';
import { filterControl, parseCell, whereOf, type Where } from './filters.js';
import { orderOf, type Route } from './route.js';
import { columnsOf, isKeyProp, tableOf as findTable, type PropDef, type TableType } from './schema-info.js';

const PAGE = 50;
/** Characters a cell shows of a long value; the rest is in its tooltip and on the entity's page. */
const CLIP = 80;
const clipped = (v: unknown): string => {
  const t = valueText(v);
  return t.length > CLIP ? `${t.slice(0, CLIP - 1)}…` : t;
};
type Item = { key: string; row: Record<string, unknown>; cursor: string };

export async function tableView(view: HTMLElement, ctx: ExplorerContext, route: Extract<Route, { view: 'table' }>): Promise<void> {
  const t = findTable(ctx.info, route.table);
  if (t === undefined) return replace(view, statusBox('bad', `not_found: table ${route.table} does not exist at ${ctx.at}`));
  const where = route.where ? (JSON.parse(route.where) as Where) : undefined;
  const columns = columnsOf(t);
  const controls = columns.map((p) => filterControl(p, where?.[p.name])).filter((c) => c !== null);
  const apply = button(
    'Apply filters',
    () => {
      const w = whereOf(controls);
      ctx.go({
        view: 'table',
        at: ctx.at,
        table: t.name,
        ...(w ? { where: JSON.stringify(w) } : {}),
        ...(route.order ? { order: route.order } : {}),
      });
    },
    { id: 'apply-filters', class: 'primary' },
  );
  const form = h('form', { class: 'filters', 'aria-label': `filters of ${t.name}` }, [...controls.map((c) => c.element), apply]);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    apply.click();
  });
  const body = h('div', { id: 'table-rows' }, [h('p', { class: 'muted', text: 'Reading rows…' })]);
  replace(
    view,
    h('h2', { id: 'view-title', tabindex: -1, text: `${t.name}` }, [
      h('span', { class: 'badge', text: t.kind === 'edge' ? `edge ${t.from} → ${t.to}` : 'node' }),
    ]),
    h('p', { class: 'muted', text: `at ${ctx.at} (${ctx.pinned.slice(7, 17)})${ctx.point ? '' : ' · read only'}` }),
    form,
    body,
    ctx.point ? addRowForm(ctx, t) : null,
  );
  await showPage(body, { ctx, t, route, where, cursors: [] });
}

interface PageState {
  ctx: ExplorerContext;
  t: TableType;
  route: Extract<Route, { view: 'table' }>;
  where: Where | undefined;
  /** The cursors of the pages before this one, so Previous walks back. */
  cursors: (string | undefined)[];
  after?: string;
}

async function showPage(body: HTMLElement, s: PageState): Promise<void> {
  const { ctx, t, route } = s;
  try {
    const orderBy = orderOf(route.order);
    const page = await answer(
      api().POST('/tables/{table}/query', {
        params: { path: { table: t.name } },
        body: {
          at: ctx.pinned,
          first: PAGE,
          count: true,
          ...(s.where ? { where: s.where } : {}),
          ...(orderBy ? { orderBy } : {}),
          ...(s.after ? { after: s.after } : {}),
        },
      }),
    );
    const columns = columnsOf(t);
    const header = h('tr', {}, [
      h('th', { scope: 'col', text: 'key' }),
      ...columns.map((p) => h('th', { scope: 'col', 'aria-sort': sortOf(route.order, p.name) }, [sortButton(ctx, route, p)])),
      ...(ctx.point ? [h('th', { scope: 'col', text: '' })] : []),
    ]);
    const rows = page.items.map((item) => rowOf(ctx, t, item as Item));
    const from = s.cursors.length * PAGE;
    const count = page.totalCount ?? 0;
    const nav = h('div', { class: 'row' }, [
      h('span', { id: 'row-count', text: `${count === 0 ? 0 : from + 1}–${from + rows.length} of ${count} row(s)` }),
      button('Previous page', () => void showPage(body, { ...s, cursors: s.cursors.slice(0, -1), after: s.cursors.at(-1) }), {
        id: 'prev-page',
        disabled: s.cursors.length === 0,
      }),
      button(
        'Next page',
        () => void showPage(body, { ...s, cursors: [...s.cursors, s.after], after: (page.items.at(-1) as Item).cursor }),
        {
          id: 'next-page',
          disabled: !page.hasNextPage,
        },
      ),
    ]);
    replace(body, h('table', { id: 'rows' }, [h('thead', {}, [header]), h('tbody', {}, rows)]), nav);
  } catch (e) {
    replace(body, statusBox('bad', failureText(e), 'rows-error'));
  }
}

const sortOf = (order: string | undefined, prop: string): 'ascending' | 'descending' | undefined =>
  order === prop ? 'ascending' : order === `${prop}-` ? 'descending' : undefined;

function sortButton(ctx: ExplorerContext, route: Extract<Route, { view: 'table' }>, p: PropDef): HTMLButtonElement {
  const next = route.order === p.name ? `${p.name}-` : p.name;
  const arrow = route.order === p.name ? ' ▲' : route.order === `${p.name}-` ? ' ▼' : '';
  return button(`${p.name}${arrow}`, () => ctx.go({ ...route, order: next }), {
    class: 'sort',
    title: `${p.type.kind}${p.optional ? '?' : ''}`,
    'aria-label': `sort by ${p.name}${route.order === p.name ? ', descending' : ''}`,
  });
}

function rowOf(ctx: ExplorerContext, t: TableType, item: Item): HTMLTableRowElement {
  const open = button(item.key, () => ctx.go({ view: 'entity', at: ctx.at, table: t.name, key: item.key }), {
    class: 'link',
    'aria-label': `open ${t.name} ${item.key}`,
  });
  const cells = columnsOf(t).map((p) => {
    const td = cell(clipped(item.row[p.name]), p.type.kind === 'int' || p.type.kind === 'float' ? 'num' : undefined);
    if (valueText(item.row[p.name]).length > CLIP) td.title = valueText(item.row[p.name]);
    td.setAttribute('data-prop', p.name);
    if (ctx.point && !isKeyProp(t, p.name)) {
      td.tabIndex = 0;
      td.title ||= 'Enter or double-click to edit';
      const edit = () => editCell(ctx, { t, item, p, td });
      td.addEventListener('dblclick', edit);
      td.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') edit();
      });
    }
    return td;
  });
  const actions = ctx.point
    ? [
        h('td', {}, [
          button('Delete', () => void remove(ctx, t, item), { 'aria-label': `delete ${t.name} ${item.key}`, 'data-delete': item.key }),
        ]),
      ]
    : [];
  return h('tr', { 'data-key': item.key }, [h('td', {}, [open]), ...cells, ...actions]);
}

function editCell(ctx: ExplorerContext, c: { t: TableType; item: Item; p: PropDef; td: HTMLTableCellElement }): void {
  const { t, item, p, td } = c;
  if (td.querySelector('input') !== null) return;
  const input = h('input', { 'aria-label': `new ${p.name} of ${item.key}`, value: valueText(item.row[p.name]) });
  td.classList.add('edit');
  replace(td, input);
  input.focus();
  input.select();
  const cancel = () => {
    td.classList.remove('edit');
    replace(td, valueText(item.row[p.name]));
    td.focus();
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') cancel();
    if (e.key !== 'Enter') return;
    e.stopPropagation();
    void (async () => {
      try {
        const value = parseCell(p, input.value);
        const key = Object.fromEntries(Object.entries(item.row).filter(([k]) => isKeyProp(t, k)));
        await editOutcome(ctx, await makeEdit(point(ctx), ctx.info, { table: t, edit: { kind: 'update', key, set: { [p.name]: value } } }));
      } catch (e) {
        ctx.say(failureText(e));
        td.append(statusBox('bad', failureText(e), 'edit-error'));
      }
    })();
  });
}

async function remove(ctx: ExplorerContext, t: TableType, item: Item): Promise<void> {
  if (!confirm(`Delete ${t.name} ${item.key}${t.kind === 'node' ? ' and its edges' : ''}?`)) return;
  const key = Object.fromEntries(Object.entries(item.row).filter(([k]) => isKeyProp(t, k)));
  try {
    await editOutcome(ctx, await makeEdit(point(ctx), ctx.info, { table: t, edit: { kind: 'delete', key } }));
  } catch (e) {
    ctx.say(failureText(e));
  }
}

function addRowForm(ctx: ExplorerContext, t: TableType): HTMLElement {
  const inputs = columnsOf(t).map((p) => ({
    p,
    input: h('input', { id: `new-${p.name}`, size: 14, placeholder: `${p.type.kind}${p.optional ? ' (optional)' : ''}` }),
  }));
  const out = h('div', { id: 'add-result' });
  const add = button(
    'Add row',
    async () => {
      try {
        const row = Object.fromEntries(
          inputs.filter(({ p, input }) => input.value !== '' || !p.optional).map(({ p, input }) => [p.name, parseCell(p, input.value)]),
        );
        await editOutcome(ctx, await makeEdit(point(ctx), ctx.info, { table: t, edit: { kind: 'create', row } }));
      } catch (e) {
        replace(out, statusBox('bad', failureText(e), 'add-error'));
      }
    },
    { id: 'add-row', class: 'primary' },
  );
  return h('details', { id: 'add-row-form' }, [
    h('summary', { text: `Add a ${t.name}` }),
    h(
      'div',
      { class: 'filters' },
      inputs.map(({ p, input }) => labelled(p.name, input)),
    ),
    add,
    out,
  ]);
}

const point = (ctx: ExplorerContext) => {
  if (ctx.point === null) throw new Error(`${ctx.at} is not a branch: edits need one`);
  return ctx.point;
};
