/**
 * The explorer's side bar: which ref is read (a branch, a tag, or any commit typed in), the
 * tables at that ref with their stored rows, and the way to compare two refs.
 */
import { answer, api, failureText } from '../shared/api.js';
import { button, h, labelled, replace, statusBox } from '../shared/dom.js';
import type { Route } from './route.js';

export async function sideBar(side: HTMLElement, r: { at: string; table?: string; go: (route: Route) => void }): Promise<void> {
  const { at, go } = r;
  const ref = h('select', { id: 'ref' });
  const typed = h('input', { id: 'ref-typed', size: 16, placeholder: 'commit:… or tag:…' });
  const read = button('Read', () => go({ view: 'home', at: typed.value.trim() || at }), { id: 'read-ref' });
  ref.addEventListener('change', () => go({ view: 'home', at: ref.value }));
  const tables = h('ul', { id: 'tables', 'aria-label': 'tables' }, [h('li', { class: 'muted', text: 'Reading tables…' })]);
  replace(
    side,
    h('div', { class: 'stack' }, [labelled('ref', ref), h('div', { class: 'row' }, [labelled('or', typed), read])]),
    h('h3', { text: 'Tables' }),
    tables,
    h('h3', { text: 'Compare' }),
    button('Diff two refs', () => go({ view: 'diff', from: 'main', to: at === 'main' ? '' : at }), { id: 'open-diff' }),
  );
  const [branches, tags, listed] = await Promise.allSettled([
    answer(api().GET('/branches', { params: { query: { limit: 1000 } } })),
    answer(api().GET('/tags')),
    answer(api().GET('/tables', { params: { query: { at } } })),
  ]);
  const options = [
    ...(branches.status === 'fulfilled' ? branches.value.branches.map((b) => b.name) : []),
    ...(tags.status === 'fulfilled' ? tags.value.tags.map((t) => `tag:${t.name}`) : []),
  ];
  if (!options.includes(at)) options.unshift(at);
  replace(
    ref,
    ...[
      h(
        'optgroup',
        { label: 'branches and tags' },
        options.map((o) => h('option', { value: o, text: o, selected: o === at })),
      ),
    ],
  );
  if (listed.status === 'rejected') return replace(tables, h('li', {}, [statusBox('bad', failureText(listed.reason), 'tables-error')]));
  replace(
    tables,
    ...listed.value.tables.map((t) =>
      h('li', {}, [
        button(t.name, () => go({ view: 'table', at, table: t.name }), {
          'aria-current': t.name === r.table ? 'true' : 'false',
          'data-table': t.name,
        }),
        h('small', { text: `${t.kind}${t.kind === 'edge' ? ` ${t.from} → ${t.to}` : ''} · ${t.storedRows} stored row(s)` }),
      ]),
    ),
  );
}
