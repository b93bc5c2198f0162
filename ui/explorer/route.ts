/**
 * Where the explorer is, as the URL's hash: what a reader bookmarks, shares, and walks back
 * through with the browser's history. Pure, so it is tested without a browser.
 *
 *   #at=main&table=Person                        a table at a ref
 *   #at=main&table=Person&where={…}&order=age-   …filtered and ordered (trailing - is descending)
 *   #at=tag:v1&table=Person&key=ann              an entity
 *   #view=diff&from=main&to=feature              what feature changed since it left main
 *   #diff=main...feature                         the same, as a person types it (split at the first ...)
 */

export type Route =
  | { view: 'home'; at: string }
  | { view: 'table'; at: string; table: string; where?: string; order?: string }
  | { view: 'entity'; at: string; table: string; key: string }
  | { view: 'diff'; from: string; to: string };

export const DEFAULT_REF = 'main';

export function parseRoute(hash: string): Route {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  if (p.get('view') === 'diff') return { view: 'diff', from: p.get('from') ?? DEFAULT_REF, to: p.get('to') ?? '' };
  const typed = p.get('diff');
  if (typed !== null) {
    const at = typed.indexOf('...');
    return at < 0
      ? { view: 'diff', from: typed || DEFAULT_REF, to: '' }
      : { view: 'diff', from: typed.slice(0, at), to: typed.slice(at + 3) };
  }
  const at = p.get('at') || DEFAULT_REF;
  const table = p.get('table');
  if (table === null || table === '') return { view: 'home', at };
  const key = p.get('key');
  if (key !== null) return { view: 'entity', at, table, key };
  const where = p.get('where') ?? undefined;
  const order = p.get('order') ?? undefined;
  return { view: 'table', at, table, ...(where ? { where } : {}), ...(order ? { order } : {}) };
}

export function formatRoute(r: Route): string {
  const p = new URLSearchParams();
  // Written as two parameters: a ref may hold dots, which `from...to` could not tell apart.
  if (r.view === 'diff') {
    p.set('view', 'diff');
    p.set('from', r.from);
    p.set('to', r.to);
  } else {
    p.set('at', r.at);
    if (r.view !== 'home') p.set('table', r.table);
    if (r.view === 'entity') p.set('key', r.key);
    if (r.view === 'table' && r.where) p.set('where', r.where);
    if (r.view === 'table' && r.order) p.set('order', r.order);
  }
  return `#${p.toString()}`;
}

/** An order as the hash spells it (`age-` is descending) and as the API takes it. */
export function orderOf(order: string | undefined): { prop: string; direction: 'asc' | 'desc' }[] | undefined {
  if (!order) return undefined;
  return [{ prop: order.replace(/-$/, ''), direction: order.endsWith('-') ? 'desc' : 'asc' }];
}
