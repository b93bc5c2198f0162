import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSteps } from './json-steps.js';
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

  it('takes a step per item of a long array, under objects and short arrays too, three levels down', () => {
    const fields = Array.from({ length: 5000 }, (_, i) => ({ name: `f${i}`, args: [] }));
    const root = [{ kind: 'OBJECT', name: 'Mutation', fields }];
    expect(text(root).steps).toBeGreaterThanOrEqual(5000);
    expect(text({ types: root }).steps).toBeGreaterThanOrEqual(5000);
    expect(text(fields.slice(0, 10)).steps).toBe(0);
    expect(runSteps(jsonSteps(null, []))).toBeUndefined();
  });
});
