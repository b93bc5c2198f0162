/**
 * The browser pages under `/ui`: the review page (`/ui`) and the graph explorer (`/ui/explore`).
 * Their code is typed TypeScript in ui/, bundled by `npm run build` into dist/ui (scripts/
 * bundle.mjs); here they get their HTML shell and their assets, served from the package, so a
 * page loads nothing from anywhere else (its Content-Security-Policy says so) and works offline.
 * Both call the public API only, relative to where they are served, so `/graphs/<name>/ui`
 * reviews and explores that graph.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Hono } from 'hono';
import { packageRoot } from '../service/package-root.js';
import type { Env } from './http-context.js';
import { BranchgraphError } from '../model/errors.js';

export const UI_ASSETS = '/ui/assets';

/** What each page's script may do: talk to this server, draw into canvases it exports as images. */
const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'";

interface Page {
  title: string;
  script: string;
  /** The page's own markup inside `<main>`, beside the shared header. */
  main: string;
}

const PAGES: Record<'review' | 'explore', Page> = {
  review: {
    title: 'branchgraph review',
    script: 'review.js',
    main: `<nav aria-label="merge requests">
    <div class="row">
      <label>show <select id="state"><option value="open">open</option><option value="merged">merged</option><option value="closed">closed</option><option value="all">all</option></select></label>
      <button id="new-request" type="button">New request</button>
    </div>
    <ul id="requests"></ul>
  </nav>
  <section id="view" aria-live="polite"><p class="muted">Pick a merge request, or open a new one.</p></section>`,
  },
  explore: {
    title: 'branchgraph explorer',
    script: 'explorer.js',
    main: `<aside id="side" aria-label="ref and tables"></aside>
  <section id="view" aria-live="polite"><p class="muted">Reading the graph…</p></section>`,
  },
};

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** A built asset's name: letters, digits, dashes and dots, no path. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.(js|css)$/;

const assetDir = (): string => path.join(packageRoot(), 'dist', 'ui');

function pageHtml(page: Page, base: string): string {
  const assets = `${base}${UI_ASSETS}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets}/style.css">
<script type="module" src="${assets}/${page.script}"></script>
</head>
<body>
<header id="shell"><h1>branchgraph</h1></header>
<main>
  ${page.main}
</main>
<div id="flash" role="status" aria-live="polite" class="sr"></div>
</body>
</html>
`;
}

/** Built assets, read once each: they change only with the package. */
const cache = new Map<string, Promise<Uint8Array | undefined>>();
function asset(name: string): Promise<Uint8Array | undefined> {
  let found = cache.get(name);
  if (found === undefined) {
    found = readFile(path.join(assetDir(), name)).then(
      (b) => new Uint8Array(b),
      () => undefined,
    );
    // A missing file is asked again next time: `npm run build` may run while the server does.
    void found.then((b) => {
      if (b === undefined) cache.delete(name);
    });
    cache.set(name, found);
  }
  return found;
}

export function uiRoutes(app: Hono<Env>, base: string): void {
  const review = pageHtml(PAGES.review, base);
  const explore = pageHtml(PAGES.explore, base);
  app.get('/ui', (c) => c.html(review, 200, { 'content-security-policy': UI_CSP }));
  app.get('/ui/explore', (c) => c.html(explore, 200, { 'content-security-policy': UI_CSP }));
  app.get(`${UI_ASSETS}/:file`, async (c) => {
    const name = c.req.param('file');
    const ext = path.extname(name);
    const bytes = ASSET_NAME.test(name) ? await asset(name) : undefined;
    if (bytes === undefined) {
      const why = ASSET_NAME.test(name) && (await asset('review.js')) === undefined ? ' (the pages are not built: run npm run build)' : '';
      throw new BranchgraphError('not_found', `no asset ${name}${why}`);
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'content-type': TYPES[ext] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
    });
  });
}

/** Whether `path` is one of the pages or their assets, which anyone may load: they hold no data. */
export const isUiPath = (p: string): boolean => p === '/ui' || p === '/ui/explore' || p.startsWith(`${UI_ASSETS}/`);
