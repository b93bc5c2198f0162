/**
 * `GET /`: a small page for whoever opens the server in a browser, linking what a newcomer looks
 * for first. It holds no data, so it is public, like `/healthz`.
 */
import { packageVersion } from '../service/package-root.js';

const LINKS: [string, string][] = [
  ['/ui', 'the review page for merge requests'],
  ['/graphql', 'GraphiQL: the GraphQL API in the browser'],
  ['/openapi.yaml', 'the REST contract (OpenAPI 3.1)'],
  ['/healthz', 'liveness'],
  ['/readyz', 'readiness: the store answers'],
  ['/metrics', 'Prometheus metrics'],
];

/** The page for a graph served under `base` ('' for the default graph, `/graphs/<name>` for a hosted one). */
export function indexPage(base: string): string {
  const items = LINKS.map(([path, what]) => `<li><a href="${base}${path}">${base}${path}</a> ${what}</li>`).join('\n    ');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>branchgraph</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}a{font-family:ui-monospace,monospace}</style></head>
<body>
  <h1>branchgraph ${packageVersion()}</h1>
  <p>A typed graph store with Git-style branches and three-way entity merges.</p>
  <ul>
    ${items}
  </ul>
</body>
</html>
`;
}
