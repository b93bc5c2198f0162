/**
 * The graph explorer (`/ui/explore`): pick a ref (branch, tag or commit), see its tables, filter
 * and order one, open an entity with its edges, history and blame, grow its neighbourhood on a
 * graph, compare two refs drawn on the graph, and edit: each edit one typed mutation pinned to
 * the head the page read. The hash holds where the reader is (route.ts), so every view can be
 * bookmarked and the browser's back button walks back through them.
 */
import { answer, api, failureText } from '../shared/api.js';
import { byId, replace, statusBox } from '../shared/dom.js';
import { shell } from '../shared/shell.js';
import { diffView } from './diff-view.js';
import { entityView } from './entity-view.js';
import { type ExplorerContext, isBranchRef } from './explorer-context.js';
import { formatRoute, parseRoute, type Route } from './route.js';
import { schemaAt } from './schema-info.js';
import { sideBar } from './side-bar.js';
import { tableView } from './table-view.js';
import { homeView } from './home-view.js';

let generation = 0;

const say = (message: string): void => {
  byId('flash').textContent = message;
};

function go(route: Route): void {
  const hash = formatRoute(route);
  if (location.hash === hash) void draw();
  else location.hash = hash;
}

/** Draws the route in the hash: the ref is resolved once, and every read of the view is pinned to it. */
async function draw(): Promise<void> {
  const gen = ++generation;
  const route = parseRoute(location.hash);
  const view = byId('view');
  view.setAttribute('aria-busy', 'true');
  const at = route.view === 'diff' ? route.to || route.from : route.at;
  try {
    const [info, branch] = await Promise.all([
      schemaAt(at),
      isBranchRef(at) ? answer(api().GET('/branches/{id}', { params: { path: { id: at } } })) : Promise.resolve(null),
    ]);
    if (gen !== generation) return;
    const ctx: ExplorerContext = {
      at,
      // A branch's head as the branch record gave it, so the edits expect exactly what was read.
      pinned: `commit:${branch?.head.id ?? info.commit}`,
      point:
        branch === null
          ? null
          : { branch: branch.name, head: branch.head.id, isProtected: branch.protection !== null && branch.protection !== undefined },
      info: branch !== null && branch.head.id !== info.commit ? await schemaAt(`commit:${branch.head.id}`) : info,
      go,
      reload: () => void draw(),
      say,
    };
    void sideBar(byId('side'), { at, ...(route.view === 'table' || route.view === 'entity' ? { table: route.table } : {}), go });
    if (route.view === 'table') await tableView(view, ctx, route);
    else if (route.view === 'entity') await entityView(view, ctx, route);
    else if (route.view === 'diff') await diffView(view, ctx, route);
    else await homeView(view, ctx);
    if (gen === generation) document.getElementById('view-title')?.focus();
  } catch (e) {
    if (gen === generation) replace(view, statusBox('bad', failureText(e), 'view-error'));
  } finally {
    if (gen === generation) view.setAttribute('aria-busy', 'false');
  }
}

shell('explore', () => void draw());
window.addEventListener('hashchange', () => void draw());
void draw();
