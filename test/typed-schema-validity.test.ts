/**
 * Typed schemas are valid by construction: the server assembles them without
 * graphql-js's validation (it held the event loop up to 100 ms at 1,500
 * tables), so this test validates generated schemas instead, over graph
 * schemas whose names and enum values are chosen to collide with each other
 * and with the names the generator itself uses.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GraphQLSchema, validateSchema, type GraphQLEnumType } from 'graphql';
import { parseSchema } from '../src/model/schema-parser.js';
import { buildTypedSchema, buildTypedSchemaYielding } from '../src/graphql/typed-schema.js';
import { BUILT_IN_NAMES } from '../src/graphql/typed-names.js';

// Names that collide: with the generator's own names, with each other after it derives names
// (T and t, T and T_), and with GraphQL's words.
const NAMES = [
  'T',
  't',
  'T_',
  'Tt',
  'Person',
  'PersonWhere',
  'PersonConnection',
  'PersonSearchHit',
  'PersonNumbers',
  'key',
  'id',
  'from',
  'to',
  'at',
  'set',
];
const ENUM_VALUES = ['true', 'false', 'null', 'true_', 'null__', 'a', 'A', 'a_', 'Query', '_a', '__a', 'E__a'];
const typeName = fc.constantFrom(...NAMES, ...BUILT_IN_NAMES.filter((n) => /^[A-Za-z]/.test(n)));
const propName = fc.constantFrom(...NAMES, 'fromKey', 'toKey', 'v', 'where', 'first', 'after', 'orderBy', 'connection', 'Edge');
const propType = fc.oneof(
  fc.constantFrom('string', 'int', 'float', 'bool', 'date', 'datetime', 'json', 'vector(3)', 'string @search'),
  fc.uniqueArray(fc.constantFrom(...ENUM_VALUES), { minLength: 1, maxLength: 4 }).map((vs) => `enum(${vs.join(', ')})`),
);
const props = fc.uniqueArray(fc.tuple(propName, propType), { maxLength: 4, selector: ([n]) => n });

/** A graph schema's text: node tables, then edge tables between them. */
const graphSchema = fc
  .uniqueArray(typeName, { minLength: 1, maxLength: 7 })
  .chain((names) => {
    const nodes = Math.max(1, Math.ceil(names.length / 2));
    const nodeNames = names.slice(0, nodes);
    return fc.tuple(
      fc.constant(names),
      fc.array(props, { minLength: names.length, maxLength: names.length }),
      fc.array(fc.tuple(fc.constantFrom(...nodeNames), fc.constantFrom(...nodeNames)), {
        minLength: names.length - nodes,
        maxLength: names.length - nodes,
      }),
      fc.constant(nodes),
    );
  })
  .map(([names, propsOf, ends, nodes]) =>
    names
      .map((n, i) => {
        const body = (propsOf[i] ?? [])
          .filter(([p]) => !(i >= nodes && (p === 'from' || p === 'to')))
          // Optional, the `?` before any attribute (`string? @search`).
          .map(([p, t]) => `  ${p}: ${t.includes(' @') ? t.replace(' @', '? @') : `${t}?`}`)
          .join('\n');
        if (i < nodes) return `node ${n} {\n  k0: string @key\n${body}\n}`;
        const [from, to] = ends[i - nodes] as [string, string];
        return `edge ${n}: ${from} -> ${to} {\n${body}\n}`;
      })
      .join('\n'),
  );

function validationErrors(schema: GraphQLSchema): string[] {
  // A copy without `assumeValid`, so graphql-js validates it as a server built without the shortcut would.
  return validateSchema(new GraphQLSchema({ ...schema.toConfig(), assumeValid: false })).map((e) => e.message);
}

describe('typed schemas are valid by construction', () => {
  it('for graph schemas whose names collide with each other and with generated names', () => {
    fc.assert(
      fc.property(graphSchema, (text) => {
        let graph: ReturnType<typeof parseSchema>;
        try {
          graph = parseSchema(text);
        } catch (e) {
          // A schema the language refuses never reaches the generator.
          expect((e as { code?: string }).code, text).toBe('invalid_input');
          return;
        }
        const typed = buildTypedSchema(graph);
        expect(validationErrors(typed.schema), text).toEqual([]);
        // Assembled a type at a time (schema-assembly.ts), its types in the order graphql-js's own assembly gives.
        const s = typed.schema;
        const constructed = new GraphQLSchema({ query: s.getQueryType(), mutation: s.getMutationType(), directives: s.getDirectives() });
        expect(Object.keys(s.getTypeMap()), text).toEqual(Object.keys(constructed.getTypeMap()));
      }),
      { numRuns: 300 },
    );
  });

  it('shows every enum value under a name of its own: true and true_, __a and E__a', () => {
    const values = ['true', 'true_', 'null', 'a', '__a', 'E__a'];
    const typed = buildTypedSchema(parseSchema(`node P {\n  id: string @key\n  e: enum(${values.join(', ')})?\n}`));
    const e = typed.schema.getType('PE') as GraphQLEnumType;
    expect(e.getValues().map((v) => [v.name, v.value])).toEqual([
      ['true_', 'true'],
      ['true__', 'true_'],
      ['null_', 'null'],
      ['a', 'a'],
      ['E__a', '__a'],
      ['EE__a', 'E__a'],
    ]);
  });

  it('the server build, in slices, yields the same valid schema as one build', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `node N${i} {\n  id: string @key\n  v: int?\n}`).join('\n');
    const sliced = await buildTypedSchemaYielding(parseSchema(text));
    expect(validationErrors(sliced.schema)).toEqual([]);
    expect(Object.keys(sliced.schema.getTypeMap()).sort()).toEqual(
      Object.keys(buildTypedSchema(parseSchema(text)).schema.getTypeMap()).sort(),
    );
  });
});
