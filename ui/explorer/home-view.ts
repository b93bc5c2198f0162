/** The explorer's first view of a ref: what it is, and its tables to pick from. */
import { answer, api } from '../shared/api.js';
import { button, cell, h, replace, tableOf } from '../shared/dom.js';
import type { ExplorerContext } from './explorer-context.js';

export async function homeView(view: HTMLElement, ctx: ExplorerContext): Promise<void> {
  const listed = await answer(api().GET('/tables', { params: { query: { at: ctx.pinned } } }));
  const rows = listed.tables.map((t) =>
    h('tr', { 'data-table': t.name }, [
      h('td', {}, [button(t.name, () => ctx.go({ view: 'table', at: ctx.at, table: t.name }), { class: 'link' })]),
      cell(t.kind === 'edge' ? `edge ${t.from} → ${t.to}` : 'node'),
      cell(t.key.join(', ')),
      cell(t.properties, 'num'),
      cell(t.storedRows, 'num'),
    ]),
  );
  replace(
    view,
    h('h2', { id: 'view-title', tabindex: -1, text: ctx.at }),
    h('p', {
      class: 'muted',
      text: `commit ${listed.commit}${ctx.point?.isProtected ? ' · protected: edits are proposed as merge requests' : ''}`,
    }),
    rows.length === 0
      ? h('p', { class: 'muted', text: 'No tables yet: apply a schema first.' })
      : tableOf(['table', 'kind', 'key', 'properties', 'stored rows'], rows, { id: 'table-list' }),
  );
}
