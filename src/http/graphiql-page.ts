/**
 * GraphiQL, offline and cached. The editor is about 9 MB of script, styles
 * and editor workers. Inlined into every page (as the stock renderer does),
 * a browser downloads and parses all of it on each visit, and the server
 * builds a 9 MB string per request. Here the page is a few hundred bytes
 * and the bundle is served from this server under a versioned path with
 * immutable caching, so a browser fetches it once per release and every
 * graph, branch and admin page shares that copy. Nothing is loaded from
 * elsewhere: the page still works with no internet.
 *
 * Asset links are relative to the page, so the page works behind a proxy
 * that mounts the server under a prefix.
 */
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { Env } from './http-context.js';

/** The folder the bundle is served from, at the server's root. */
export const GRAPHIQL_ASSETS = '/graphiql-assets';

/** Changes with the bundle, so a cached copy is never stale. */
const VERSION: string = createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json').version;

type Bundle = typeof import('@graphql-yoga/render-graphiql/graphiql');

/** Loaded when someone first opens a page or asks for an asset, not by every process. */
let bundle: Promise<Bundle> | undefined;
const loadBundle = (): Promise<Bundle> => {
  bundle ??= import('@graphql-yoga/render-graphiql/graphiql');
  return bundle;
};

const TEXT = (type: string, part: (b: Bundle) => string) => ({
  type: `${type}; charset=utf-8`,
  bytes: (b: Bundle) => Buffer.from(part(b)),
});
const ASSETS: Record<string, { type: string; bytes: (b: Bundle) => Buffer }> = {
  'favicon.ico': { type: 'image/x-icon', bytes: (b) => Buffer.from(b.favicon.slice(b.favicon.indexOf(',') + 1), 'base64') },
  'graphiql.js': TEXT('text/javascript', (b) => b.js),
  'graphiql.css': TEXT('text/css', (b) => b.css),
  'editor.worker.js': TEXT('text/javascript', (b) => b.editorWorkerService),
  'json.worker.js': TEXT('text/javascript', (b) => b.jsonWorker),
  'graphql.worker.js': TEXT('text/javascript', (b) => b.graphqlWorker),
};

/** Each asset encoded once per process. */
const encoded = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();
function asset(file: string): { type: string; bytes: Promise<Uint8Array<ArrayBuffer>> } | undefined {
  // Own names only: `constructor` or `__proto__` is not an asset.
  const found = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
  if (found === undefined) return undefined;
  let bytes = encoded.get(file);
  if (bytes === undefined) {
    bytes = loadBundle().then((b) => new Uint8Array(found.bytes(b)));
    encoded.set(file, bytes);
  }
  return { type: found.type, bytes };
}

/** `../` enough times to climb from the page at `pagePath` to the server's root. */
function rootFrom(pagePath: string): string {
  return '../'.repeat(Math.max(0, pagePath.split('/').length - 2)) || './';
}

/** JSON safe inside a `<script>` element: `<` escaped, so no string closes the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The page for GraphiQL served at `opts.endpoint`: each page posts to the path it is served from. */
export function renderGraphiqlPage(opts: GraphiQLOptions): string {
  const pagePath = opts.endpoint ?? '/graphql';
  const assets = `${rootFrom(pagePath)}${GRAPHIQL_ASSETS.slice(1)}/${VERSION}`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(opts.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${assets}/favicon.ico" />
    <link rel="stylesheet" href="${assets}/graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = { editorWorkerService: 'editor', json: 'json', graphql: 'graphql' };
      self.MonacoEnvironment = {
        globalAPI: false,
        getWorkerUrl: (moduleId, label) => new URL(${scriptJson(assets)} + '/' + workers[label] + '.worker.js', location.href).href,
      };
    </script>
    <script src="${assets}/graphiql.js"></script>
    <script>
      // Tabs and history kept per page: every page shares one origin's localStorage, and a branch's page
      // must not open with a query written for another branch's schema or for the admin API.
      const prefix = ${scriptJson(`branchgraph:${pagePath}:`)};
      const own = () => Object.keys(localStorage).filter((k) => k.startsWith(prefix));
      const storage = {
        getItem: (k) => localStorage.getItem(prefix + k),
        setItem: (k, v) => localStorage.setItem(prefix + k, v),
        removeItem: (k) => localStorage.removeItem(prefix + k),
        clear: () => own().forEach((k) => localStorage.removeItem(k)),
        get length() {
          return own().length;
        },
      };
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), { ...${scriptJson(opts)}, storage });
    </script>
  </body>
</html>
`;
}

/** `GET /graphiql-assets/<version>/<file>`: the bundle's parts, cached for good; another version is not found. */
export function graphiqlAssetRoute(app: Hono<Env>): void {
  app.get(`${GRAPHIQL_ASSETS}/:version/:file`, async (c) => {
    const found = c.req.param('version') === VERSION ? asset(c.req.param('file')) : undefined;
    if (found === undefined) return c.notFound();
    return c.body(await found.bytes, 200, {
      'content-type': found.type,
      'cache-control': 'public, max-age=31536000, immutable',
    });
  });
}
