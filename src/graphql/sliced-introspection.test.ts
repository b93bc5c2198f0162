import { describe, expect, it } from 'vitest';
import { getIntrospectionQuery, parse } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { parseSchema } from '../model/schema-parser.js';
import { IN_ORDER, selectionOrder } from './selection-order.js';
import { introspectionTypeLists, slicedIntrospection } from './sliced-introspection.js';
import { buildTypedSchema } from './typed-schema.js';

// Enough tables for more types than are described in one go, and roots of more fields than one turn's.
const TABLES = 110;
const schema = buildTypedSchema(
  parseSchema(
    `${Array.from({ length: TABLES }, (_, i) => `node T${i} { id: string @key\n v: int?\n kind: enum(a, b)? }`).join('\n')}\nedge E: T0 -> T1 { w: float? }`,
  ),
).schema;

const yogaWith = (plugins: Plugin[]) => createYoga({ schema, plugins: [selectionOrder() as Plugin, ...plugins], logging: false });
const plain = yogaWith([]);
/** How many answers were made in slices: seen after execution, by the mark those answers carry. */
let slicedAnswers = 0;
/** The data of the last answer made in slices, as a later plugin sees it. */
let slicedData: unknown;
const sliced = yogaWith([
  slicedIntrospection(),
  {
    onExecute: () => ({
      onExecuteDone: ({ result }) => {
        if (!(IN_ORDER in (result as object))) return;
        slicedAnswers++;
        slicedData = (result as { data?: unknown }).data;
      },
    }),
  },
]);

async function answer(yoga: ReturnType<typeof yogaWith>, query: string, variables?: Record<string, unknown>): Promise<string> {
  const res = await yoga.fetch('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  return `${res.status} ${res.headers.get('content-type')} ${await res.text()}`;
}

describe('introspection answered in slices', () => {
  it('is the answer graphql-js gives over the whole schema, byte for byte', async () => {
    expect(Object.keys(schema.getTypeMap()).length).toBeGreaterThan(1000);
    const queries: [string, Record<string, unknown>?][] = [
      [getIntrospectionQuery()],
      [
        getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          schemaDescription: true,
          inputValueDeprecation: true,
        }),
      ],
      [getIntrospectionQuery({ descriptions: false })],
      [
        'query Q($t: String!) { __typename s: __schema { t: types { name kind } types { name fields(includeDeprecated: false) { name args { name defaultValue } } } queryType { name } } b: __type(name: $t) { name fields { name } } }',
        { t: 'T7' },
      ],
    ];
    for (const [query, variables] of queries) {
      const theirs = await answer(plain, query, variables);
      expect(theirs.startsWith('200 ')).toBe(true);
      const before = slicedAnswers;
      expect(await answer(sliced, query, variables)).toBe(theirs);
      expect(slicedAnswers).toBe(before + 1);
      // A plugin that reads the answer's data sees graphql-js's, though only its bytes were kept.
      expect(slicedData).toEqual(JSON.parse(theirs.slice(theirs.indexOf('{'))).data);
    }
  });

  it('leaves errors and other operations to graphql-js', async () => {
    const before = slicedAnswers;
    for (const query of [
      '{ __schema { types { nope } } }',
      'query Q($t: String!) { __type(name: $t) { name } }',
      '{ getT1(id: "x") { id } }',
    ])
      expect(await answer(sliced, query)).toBe(await answer(plain, query));
    expect(slicedAnswers).toBe(before);
  });

  it('slices only operations that ask introspection as plain fields', () => {
    const lists = (q: string) => introspectionTypeLists(parse(q));
    expect(lists('{ __schema { types { name } t: types { kind } } x: __schema { queryType { name } } }')).toEqual([
      { root: '__schema', types: ['types', 't'] },
      { root: 'x', types: [] },
    ]);
    expect(lists('{ __typename __type(name: "T1") { name } }')).toEqual([]);
    expect(lists('{ __schema { ...F } } fragment F on __Schema { types { name } }')).toBeUndefined();
    expect(lists('{ __schema @include(if: true) { types { name } } }')).toBeUndefined();
    expect(lists('{ __schema { types { name } } getT1(id: "x") { id } }')).toBeUndefined();
    expect(lists('mutation { __typename }')).toBeUndefined();
  });
});
