/**
 * Where the explorer is, as the URL's hash: what a reader bookmarks, shares, and walks back
 * through with the browser's history. Pure, so it is tested without a browser.
 *
 *   #at=main&table=Person                        a table at a ref
 *   #at=main&table=Person&where={…}&order=age-   …filtered and ordered (trailing - is descending)
 *   #at=tag:v1&table=Person&key=ann              an entity
 *   #diff=main...feature                         what feature changed since it left main
 */

export type Route =
  | { view: 'home'; at: string }
  | { view: 'table'; at: string; table: string; where?: string; order?: string }
  | { view: 'entity'; at: string; table: string; key: string }
  | { view: 'diff'; from: string; to: string };

export const DEFAULT_REF = 'main';

export function parseRoute(hash: string): Route {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const diff = p.get('diff');
  if (diff !== null) {
    const [from = DEFAULT_REF, to = ''] = diff.split('...');
    return { view: 'diff', from, to };
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
  if (r.view === 'diff') p.set('diff', `${r.from}...${r.to}`);
  else {
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
