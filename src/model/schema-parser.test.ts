import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from './errors.js';
import { formatSchema, parseSchema, parseSchemaInSlices } from './schema-parser.js';
import type { Schema } from './schema.js';

function issuesOf(text: string): { path: string; message: string }[] {
  try {
    parseSchema(text);
  } catch (e) {
    if (e instanceof BranchgraphError && e.code === 'schema_invalid') return e.issues;
    throw e;
  }
  throw new Error('expected schema_invalid');
}

describe('schema language', () => {
  it('parses nodes, edges, every type, optionals, keys, unique, ranges, enums and cardinality', () => {
    const s = parseSchema(`
      # people
      node Person {
        id: string @key
        email: string? @unique
        age: int? @range(0, 150)
        score: float @range(, 1.5)
        ok: bool
        born: date?
        seen: datetime?
        meta: json?
        role: enum(admin, member)
      }
      node Pair { a: string @key; b: int @key }
      edge Knows: Person -> Person @cardinality(0, *) { since: date? }
      edge Likes: Person -> Pair
    `);
    expect(s.types.map((t) => t.name)).toEqual(['Knows', 'Likes', 'Pair', 'Person']);
    const person = s.types.find((t) => t.name === 'Person');
    expect(person).toMatchObject({ kind: 'node', key: ['id'] });
    expect(person?.props.find((p) => p.name === 'age')).toEqual({
      name: 'age',
      type: { kind: 'int' },
      optional: true,
      unique: false,
      range: { min: 0, max: 150 },
    });
    expect(person?.props.find((p) => p.name === 'score')?.range).toEqual({ min: null, max: 1.5 });
    expect(person?.props.find((p) => p.name === 'role')?.type).toEqual({ kind: 'enum', values: ['admin', 'member'] });
    expect(s.types.find((t) => t.name === 'Pair')).toMatchObject({ key: ['a', 'b'] });
    expect(s.types.find((t) => t.name === 'Knows')).toMatchObject({
      kind: 'edge',
      from: 'Person',
      to: 'Person',
      cardinality: { min: 0, max: null },
      key: [],
    });
  });

  it('reports line:column and what was expected', () => {
    expect(issuesOf('node Person {\n  id: strng @key\n}')).toEqual([
      { path: '2:7', message: 'expected a type (string, int, float, bool, date, datetime, json, enum(...), vector(N)), found "strng"' },
    ]);
    expect(issuesOf('node Person {\n  id string\n}')[0]).toEqual({ path: '2:6', message: 'expected ":", found "string"' });
    expect(issuesOf('edge E: A => B')[0]?.path).toBe('1:11');
    expect(issuesOf('node P { id: string @key')[0]).toEqual({
      path: '1:25',
      message: 'expected a property name or "}", found end of input',
    });
    expect(issuesOf('node P { id: string @key } $')[0]).toEqual({ path: '1:28', message: 'unexpected character "$"' });
  });

  it('collects errors from several declarations in one pass', () => {
    const issues = issuesOf('node A { x: nope }\nnode B { y: int @key }\nnode C { z: bad }');
    expect(issues.map((i) => i.path)).toEqual(['1:13', '3:13']);
  });

  it('checks meaning: duplicates, keys, endpoints, reserved names, ranges', () => {
    const msgs = (t: string) => issuesOf(t).map((i) => i.message);
    expect(msgs('node A { x: int }')).toEqual(['node A needs at least one @key property']);
    expect(msgs('node A { x: int @key }\nnode A { y: int @key }')).toContain('type A is declared twice');
    expect(msgs('node A { x: int? @key }')).toContain('A.x: a key property cannot be optional');
    expect(msgs('node A { x: int @key }\nedge E: A -> Nope')).toContain('edge E: target Nope is not a node type');
    expect(msgs('node A { x: int @key }\nedge E: A -> A { from: string }')).toContain("E.from is reserved for the edge's endpoint");
    expect(msgs('node A { x: string @key @range(1, 2) }')).toContain('A.x: @range applies to int and float only');
    expect(msgs('node A { x: int @key @range(5, 1) }')[0]).toContain('range minimum 5 is above maximum 1');
  });

  it('formats back to text that parses to the same schema', () => {
    const prop = fc.record({
      name: fc.constantFrom('p1', 'p2', 'p3'),
      type: fc.constantFrom('string', 'int', 'float', 'bool', 'date', 'datetime', 'enum(a, b)'),
      optional: fc.boolean(),
      unique: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.uniqueArray(prop, { selector: (p) => p.name, maxLength: 3 }), fc.boolean(), (props, withEdge) => {
        const body = props.map((p) => `  ${p.name}: ${p.type}${p.optional ? '?' : ''}${p.unique ? ' @unique' : ''}`).join('\n');
        const text = `node N {\n  id: string @key\n${body}\n}\n${withEdge ? 'edge E: N -> N @cardinality(1, 3) {\n  w: int? @range(0, )\n}' : ''}`;
        const s: Schema = parseSchema(text);
        expect(parseSchema(formatSchema(s))).toEqual(s);
      }),
    );
  });

  it('never throws anything but schema_invalid on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        try {
          parseSchema(text);
        } catch (e) {
          expect(e).toBeInstanceOf(BranchgraphError);
          expect((e as BranchgraphError).code).toBe('schema_invalid');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parses the same in slices as in one go, schemas and refusals alike', async () => {
    const outcome = async (parse: () => Schema | Promise<Schema>): Promise<unknown> => {
      try {
        return { schema: await parse() };
      } catch (e) {
        return { error: e instanceof BranchgraphError ? { code: e.code, message: e.message, issues: e.issues } : String(e) };
      }
    };
    // Past the tokens of one step, with a refusal far into the text: every step is run.
    const big = Array.from({ length: 1200 }, (_, i) => `node T${i} { id: string @key\n v: int? @range(0, ${i}) }`).join('\n');
    const texts = [
      big,
      `${big}\nedge E: T1 -> T1199 { w: float? }`,
      `${big}\nnode T7 { id: string @key }`,
      `${big}\nnode X { id: json @key }`,
      `${big} }`,
    ];
    for (const text of texts) expect(await outcome(() => parseSchemaInSlices(text))).toEqual(await outcome(() => parseSchema(text)));
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (text) => {
        expect(await outcome(() => parseSchemaInSlices(text))).toEqual(await outcome(() => parseSchema(text)));
      }),
      { numRuns: 200 },
    );
  });
});
