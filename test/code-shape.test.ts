/**
 * The size rule, in physical lines (signature to closing brace, comments
 * and blank lines included): no function in the engine folders (model,
 * store, table, pending, graph, merge, wal, service) runs over 70 lines,
 * and none at the edges (graphql, http, gqt, cli) over 120. A function
 * over its limit fails `npm test`, named with its file, line and length.
 * Parameter counts (at most three, the signal inside an options object)
 * are Biome's `useMaxParams`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';

const EDGES = new Set(['graphql', 'http', 'gqt', 'cli']);
const LIMIT = { engine: 70, edge: 120 };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.ts$/.test(name) && !/\.(test|conformance)\.ts$/.test(name) ? [p] : [];
  });
}

type Node = { type?: string; start?: number; end?: number; id?: { name?: string } | null; key?: { name?: string } };

/** Every function in `text` with its first line and its length in physical lines. */
function functionSizes(text: string, file: string): { name: string; line: number; lines: number }[] {
  const lineAt = (offset: number): number => text.slice(0, offset).split('\n').length;
  const out: { name: string; line: number; lines: number }[] = [];
  const visit = (node: unknown, name: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, name);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const n = node as Node & Record<string, unknown>;
    const own = n.id?.name ?? n.key?.name ?? name;
    if (/Function/.test(n.type ?? '') && n.start !== undefined && n.end !== undefined) {
      out.push({ name: own, line: lineAt(n.start), lines: lineAt(n.end) - lineAt(n.start) + 1 });
    }
    for (const [k, v] of Object.entries(n))
      if (k !== 'type' && typeof v === 'object')
        visit(v, n.type === 'VariableDeclarator' || n.type === 'MethodDefinition' || n.type === 'Property' ? own : name);
  };
  visit(parseAst(text, { lang: 'ts' }, file), '<anonymous>');
  return out;
}

describe('code shape', () => {
  it('keeps every function within its folder limit, in physical lines', () => {
    const over: string[] = [];
    const files = sources('src');
    for (const file of files) {
      const layer = path.relative('src', file).split(path.sep)[0] as string;
      const limit = EDGES.has(layer) ? LIMIT.edge : LIMIT.engine;
      for (const f of functionSizes(readFileSync(file, 'utf8'), file))
        if (f.lines > limit) over.push(`${file}:${f.line} ${f.name}: ${f.lines} lines (at most ${limit})`);
    }
    expect(files.length).toBeGreaterThan(100);
    expect(over).toEqual([]);
  });

  it('measures physical lines, comments and blank lines included (the rule itself can fail)', () => {
    const body = Array.from({ length: 81 }, (_, i) => (i % 3 === 0 ? '  // why' : i % 3 === 1 ? '' : `  x += ${i};`)).join('\n');
    const sizes = functionSizes(
      `export function long(x: number): number {\n${body}\n  return x;\n}\nconst short = (): number => 1;\n`,
      'x.ts',
    );
    expect(sizes).toEqual([
      { name: 'long', line: 1, lines: 84 },
      { name: 'short', line: 85, lines: 1 },
    ]);
  });
});
