/**
 * The layer rule, checked over the import graph of src/ and bench/: every
 * import of a module (tests aside) points down the layers of
 * docs/architecture.md, the edges reach the engine only through the
 * service, no folder's files import each other in a circle, and each layer
 * uses only the npm packages it is allowed (no HTTP, GraphQL, logging or
 * AWS below the service; only the store speaks to S3). A new import that
 * breaks a rule fails `npm test`, naming the file and the import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLIENT = path.resolve('clients/typescript/src');
const ENGINE = ['model', 'store', 'table', 'pending', 'graph', 'merge', 'wal'];

/** What each folder may import besides itself. */
const ALLOWED: Record<string, string[]> = {
  model: [],
  store: ['model'],
  table: ['model'],
  pending: ['model', 'store', 'table'],
  graph: ['model', 'store', 'table', 'pending'],
  merge: ['model', 'store', 'table', 'pending', 'graph'],
  wal: ['model', 'store', 'table', 'pending', 'graph'],
  service: [...ENGINE],
  graphql: ['model', 'service'],
  // MCP tools are derived from the operation table and run over any API.
  mcp: ['model', 'service'],
  // The REST client is an adapter over the typed client generated from the contract (clients/typescript).
  http: ['model', 'service', 'graphql', 'mcp', 'client'],
  // The GQT harness picks the store a case replays against; everything else goes through the service.
  gqt: ['model', 'service', 'http', 'store'],
  cli: ['model', 'service', 'http', 'gqt', 'mcp'],
  // The public entry point re-exports from every layer.
  'index.ts': [...ENGINE, 'service', 'graphql', 'mcp', 'http', 'gqt', 'cli'],
  // Benchmarks drive the engine and the service directly, and may start servers.
  bench: [...ENGINE, 'service', 'http', 'gqt'],
};

/** npm packages each layer may import (Node's own modules are open to all). */
const CORE = ['ulid', 'zod'];
const PACKAGES: Record<string, string[]> = {
  model: [...CORE, 'stemmer'],
  // Only the store speaks to S3.
  store: [...CORE, '@aws-sdk/client-s3'],
  table: [...CORE, 'apache-arrow'],
  pending: [...CORE, 'apache-arrow'],
  graph: [...CORE, 'apache-arrow', 'parquet-wasm'],
  merge: CORE,
  wal: CORE,
  // The service logs (pino), keeps metrics and validates input; no HTTP or GraphQL.
  service: [...CORE, 'pino', 'prom-client', '@opentelemetry/api'],
  // The typed API's scalars (graphql-scalars), per-request batching (dataloader) and compiled execution (graphql-jit).
  graphql: [...CORE, 'graphql', 'graphql-yoga', 'graphql-scalars', 'dataloader', 'graphql-jit'],
  mcp: [...CORE, '@modelcontextprotocol/sdk'],
  http: [
    ...CORE,
    '@opentelemetry/api',
    'hono',
    '@hono/node-server',
    'pino',
    'graphql',
    'graphql-yoga',
    '@graphql-yoga/render-graphiql',
    '@modelcontextprotocol/sdk',
  ],
  gqt: [...CORE, 'pino'],
  cli: [...CORE, 'commander', 'pino', '@modelcontextprotocol/sdk'],
  'index.ts': CORE,
  // The peers' clients: PostgreSQL's (pg), SQLite's (better-sqlite3, for FTS5), MCP's for what a tool call costs; Chromium's for the explorer's paint; the bundler, to run our load arm as the package runs; graphql, for the introspection query client tools send.
  bench: [
    ...CORE,
    'pino',
    'graphql',
    'apache-arrow',
    '@duckdb/node-api',
    'pg',
    '@modelcontextprotocol/sdk',
    'better-sqlite3',
    'puppeteer-core',
    'esbuild',
  ],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    // A bench peer installs its own packages (bench/peers/lancedb): they are not our sources.
    if (name === 'node_modules') return [];
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.ts$/.test(name) && !/\.(test|conformance)\.ts$/.test(name) ? [p] : [];
  });
}

const IMPORT = /(?:from\s+|import\s*\(\s*|^import\s+)'([^']+)'/gm;

/** The layer a file is in: its folder under src/, `index.ts`, or `bench`. */
function layerOf(file: string): string {
  const rel = path.relative('.', file).split(path.sep);
  return rel[0] === 'bench' ? 'bench' : (rel[1] as string);
}

/** Every import of every file: relative ones resolved to a path, packages by name. */
function importsOf(file: string): { spec: string; resolved?: string; pkg?: string }[] {
  const code = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(IMPORT)].map((m) => {
    const spec = m[1] as string;
    if (spec.startsWith('.')) return { spec, resolved: path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts') };
    if (spec.startsWith('node:')) return { spec };
    const parts = spec.split('/');
    return { spec, pkg: spec.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string) };
  });
}

const FILES = [...sources('src'), ...sources('bench')];

describe('layers', () => {
  it('no module imports up the layers, and edges reach the engine only through the service', () => {
    const violations: string[] = [];
    for (const file of FILES) {
      const layer = layerOf(file);
      const allowed = ALLOWED[layer];
      if (allowed === undefined) {
        violations.push(`${file}: folder ${layer} has no place in the layer rule`);
        continue;
      }
      for (const { spec, resolved } of importsOf(file)) {
        if (resolved === undefined) continue;
        const target = resolved.startsWith(CLIENT) ? 'client' : layerOf(path.relative('.', resolved));
        if (target !== layer && !allowed.includes(target))
          violations.push(`${file} imports ${spec} (${layer} may not depend on ${target})`);
      }
    }
    expect(FILES.length).toBeGreaterThan(50);
    expect(violations).toEqual([]);
  });

  it('each layer imports only the npm packages it may use', () => {
    const violations: string[] = [];
    for (const file of FILES) {
      const layer = layerOf(file);
      for (const { pkg } of importsOf(file)) {
        if (pkg !== undefined && !(PACKAGES[layer] ?? []).includes(pkg))
          violations.push(`${file} imports ${pkg} (not a package ${layer} may use)`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('no files of one folder import each other in a circle (type imports included)', () => {
    const graph = new Map<string, string[]>();
    for (const file of FILES) {
      const abs = path.resolve(file);
      graph.set(
        abs,
        importsOf(file).flatMap((i) => (i.resolved !== undefined && path.dirname(i.resolved) === path.dirname(abs) ? [i.resolved] : [])),
      );
    }
    expect(findCycles(graph).map((c) => c.map((f) => path.relative('.', f)).join(' → '))).toEqual([]);
  });

  it('keeps the typed client free of the server: it imports nothing from src/', () => {
    const imports = sources(CLIENT).flatMap((file) => importsOf(file).flatMap((i) => (i.resolved !== undefined ? [i.resolved] : [])));
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((p) => !p.startsWith(CLIENT))).toEqual([]);
  });

  it('keeps the browser pages on the public API: the typed client, and of the server only pure naming code', () => {
    // What a page may bundle from src/: code with no Node dependency. Types (import type) are erased.
    const browserSafe = new Set(['src/model/key-props.ts', 'src/model/steps.ts', 'src/graphql/typed-names.ts'].map((f) => path.resolve(f)));
    const UI = path.resolve('ui');
    const files = sources('ui');
    const violations: string[] = [];
    for (const file of files) {
      const code = readFileSync(file, 'utf8');
      for (const { spec, resolved, pkg } of importsOf(file)) {
        const typeOnly = new RegExp(`import type [^;]*'${spec.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`).test(code);
        if (pkg !== undefined && pkg !== 'cytoscape') violations.push(`${file} imports ${pkg}`);
        if (spec.startsWith('node:')) violations.push(`${file} imports ${spec}`);
        if (resolved !== undefined && !resolved.startsWith(UI) && !resolved.startsWith(CLIENT) && !browserSafe.has(resolved) && !typeOnly)
          violations.push(`${file} imports ${spec}`);
      }
    }
    expect(files.length).toBeGreaterThan(10);
    expect(violations).toEqual([]);
    // And what they may bundle imports nothing else of the server.
    for (const f of browserSafe)
      for (const { spec, resolved } of importsOf(f))
        if (resolved !== undefined && !browserSafe.has(resolved))
          expect(new RegExp(`import type [^;]*'${spec}'`).test(readFileSync(f, 'utf8')), `${f} imports ${spec}`).toBe(true);
  });

  it('finds a circle when there is one (the check itself can fail)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(g)).toEqual([['a', 'b', 'c', 'a']]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });
});

/** One cycle per strongly connected group of files, each named from its smallest file (Tarjan's algorithm). */
function findCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(cycleThrough(graph, new Set(group)));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** A shortest circle inside one group, from its smallest member back to it. */
function cycleThrough(graph: Map<string, string[]>, group: Set<string>): string[] {
  const start = [...group].sort()[0] as string;
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of (graph.get(v) ?? []).filter((x) => group.has(x))) {
      if (w === start) {
        const path = [start];
        for (let x: string | undefined = v; x !== undefined && x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
