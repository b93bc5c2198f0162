/**
 * The layer rule, checked over the import graph of src/: every import of a
 * module (tests aside) points down the layers of docs/architecture.md, and
 * the edges reach the engine only through the service. A new import that
 * points the wrong way fails `npm test`, naming the file and the import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLIENT = path.resolve('clients/typescript/src');

/** What each folder may import besides itself. */
const ALLOWED: Record<string, string[]> = {
  model: [],
  store: ['model'],
  table: ['model'],
  pending: ['model', 'store', 'table'],
  graph: ['model', 'store', 'table', 'pending'],
  merge: ['model', 'store', 'table', 'pending', 'graph'],
  wal: ['model', 'store', 'table', 'pending', 'graph'],
  service: ['model', 'store', 'table', 'pending', 'graph', 'merge', 'wal'],
  graphql: ['model', 'service'],
  // The REST client is an adapter over the typed client generated from the contract (clients/typescript).
  http: ['model', 'service', 'graphql', 'client'],
  // The GQT harness picks the store a case replays against; everything else goes through the service.
  gqt: ['model', 'service', 'http', 'store'],
  cli: ['model', 'service', 'http', 'gqt'],
  // The public entry point re-exports from every layer.
  'index.ts': ['model', 'store', 'table', 'pending', 'graph', 'merge', 'wal', 'service', 'graphql', 'http', 'gqt', 'cli'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.ts$/.test(name) && !/\.(test|conformance)\.ts$/.test(name) ? [p] : [];
  });
}

describe('layers', () => {
  it('no module imports up the layers, and edges reach the engine only through the service', () => {
    const violations: string[] = [];
    const files = sources('src');
    for (const file of files) {
      const layer = path.relative('src', file).split(path.sep)[0] as string;
      const allowed = ALLOWED[layer];
      if (allowed === undefined) {
        violations.push(`${file}: folder ${layer} has no place in the layer rule`);
        continue;
      }
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\s*\()'(\.[^']+)'/g)) {
        const resolved = path.resolve(path.dirname(file), m[1] as string);
        const target = resolved.startsWith(CLIENT) ? 'client' : (path.relative('src', resolved).split(path.sep)[0] as string);
        if (target !== layer && !allowed.includes(target)) violations.push(`${file} imports ${m[1]} (${layer} may not depend on ${target})`);
      }
    }
    expect(files.length).toBeGreaterThan(50);
    expect(violations).toEqual([]);
  });

  it('keeps the typed client free of the server: it imports nothing from src/', () => {
    const imports = sources(CLIENT).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\s*\()'(\.[^']+)'/g)].map((m) => path.resolve(path.dirname(file), m[1] as string)));
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((p) => !p.startsWith(CLIENT))).toEqual([]);
  });
});
