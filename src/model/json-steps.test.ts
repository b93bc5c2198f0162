import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLengthAtLeast, jsonSteps } from './json-steps.js';
import { runSteps } from './steps.js';

const text = (value: unknown): { text: string; steps: number } => {
  const out: string[] = [];
  const steps = jsonSteps(value, out);
  let n = 0;
  while (steps.next().done !== true) n++;
  return { text: out.join(''), steps: n };
};

describe('JSON text in steps', () => {
  it('is the text JSON.stringify gives, for any plain data, long arrays among it', () => {
    const long = fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 60, maxLength: 200 });
    const data = fc.oneof(
      fc.jsonValue(),
      long,
      fc.record({ a: long, b: fc.option(fc.string()), c: fc.record({ d: long }) }),
      fc.array(fc.record({ name: fc.string(), fields: long, skipped: fc.constant(undefined) }), { maxLength: 4 }),
    );
    fc.assert(
      fc.property(data, (v) => {
        expect(text(v).text).toBe(JSON.stringify(v));
      }),
      { numRuns: 200 },
    );
    expect(text([1, undefined, { x: undefined, y: [undefined] }]).text).toBe(
      JSON.stringify([1, undefined, { x: undefined, y: [undefined] }]),
    );
  });

  it('takes a step per item or member of a large array or object, at any depth; a small value is one piece', () => {
    const fields = Array.from({ length: 5000 }, (_, i) => ({ name: `f${i}`, args: [] }));
    const root = [{ kind: 'OBJECT', name: 'Mutation', fields }];
    expect(text(root).steps).toBeGreaterThanOrEqual(5000);
    expect(text({ types: root }).steps).toBeGreaterThanOrEqual(5000);
    expect(text(fields.slice(0, 10)).steps).toBe(0);
    expect(runSteps(jsonSteps(null, []))).toBeUndefined();
    // A few large rows: a step per row and per member of each, and no piece longer than a member.
    const row = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, 'x'.repeat(1000)]));
    const rows = { items: Array.from({ length: 3 }, () => row), next: null };
    const out: string[] = [];
    const steps = jsonSteps(rows, out);
    let n = 0;
    while (steps.next().done !== true) n++;
    expect(out.join('')).toBe(JSON.stringify(rows));
    expect(n).toBeGreaterThanOrEqual(300);
    expect(Math.max(...out.map((p) => p.length))).toBeLessThan(1010);
    expect(jsonLengthAtLeast(rows, 300_000)).toBe(true);
    expect(jsonLengthAtLeast(rows, 400_000)).toBe(false);
  });
});
