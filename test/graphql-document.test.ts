/**
 * The SDL generator's rules, one at a time, on small operations made for the
 * test: what each zod shape becomes in GraphQL, how fields take their
 * arguments, and that two shapes under one name are refused.
 */
import { buildSchema, getNamedType, isUnionType, printType, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { graphqlDocument } from '../src/graphql/graphql-document.js';
import { defineOperation, type Operation } from '../src/service/operation.js';
import { IdZ, Int64Z } from '../src/service/results/scalars.js';

const OVERLAY = 'scalar JSON\ntype Query\ntype Mutation';

function op(name: string, input: z.ZodObject, output: z.ZodType, extra: Record<string, unknown> = {}): Operation {
  return defineOperation({
    name,
    summary: `${name} for the test`,
    role: 'read',
    access: () => ({}),
    input,
    output,
    run: async () => ({}) as never,
    http: { method: 'POST', path: `/x/{id}/${name}`, params: { id: 'target' } },
    graphql: [{ type: 'Mutation', field: name, ...extra }],
  }) as unknown as Operation;
}

function schemaOf(...ops: Operation[]): GraphQLSchema {
  return buildSchema(graphqlDocument(ops, OVERLAY));
}

const mutation = (s: GraphQLSchema, name: string) => s.getMutationType()?.getFields()[name];

describe('the GraphQL document from the operation table', () => {
  it('maps ids, counts, byte counts, numbers, literals and open values to their scalars', () => {
    const out = z
      .object({
        id: IdZ,
        rows: z.number().int(),
        bytes: Int64Z,
        ms: z.number(),
        flag: z.literal(true),
        value: z.unknown(),
        row: z.record(z.string(), z.unknown()),
        note: z.string().nullable(),
      })
      .meta({ title: 'Shapes' });
    const s = schemaOf(op('shapes', z.object({ target: z.string() }), out));
    expect(printType(s.getType('Shapes') as never)).toBe(
      'type Shapes {\n  id: ID!\n  rows: Int!\n  bytes: Float!\n  ms: Float!\n  flag: Boolean!\n  value: JSON\n  row: JSON!\n  note: String\n}',
    );
  });

  it('takes path parameters as arguments and the rest in the named input object, required when any field is', () => {
    const input = z.object({
      target: z.string(),
      when: z.string().optional(),
      what: z.array(z.object({ n: z.number().int() }).meta({ title: 'Item' })),
    });
    const s = schemaOf(op('wrap', input, z.boolean(), { input: 'WrapInput' }));
    const f = mutation(s, 'wrap');
    expect(f?.args.map((a) => `${a.name}: ${a.type}`)).toEqual(['target: String!', 'input: WrapInput!']);
    expect(printType(s.getType('WrapInput') as never)).toBe('input WrapInput {\n  when: String\n  what: [ItemInput!]!\n}');
  });

  it('makes a union of object results, an enum of a titled enum, and a string of any other', () => {
    const A = z.object({ a: z.string() }).meta({ title: 'A' });
    const B = z.object({ b: z.string() }).meta({ title: 'B' });
    const input = z.object({ target: z.string(), dir: z.enum(['up', 'down']).meta({ title: 'Dir' }), mode: z.enum(['two-dot', 'x']) });
    const s = schemaOf(op('either', input, z.union([A, B]).meta({ title: 'Either' })));
    const t = getNamedType(mutation(s, 'either')?.type as never);
    expect(isUnionType(t) && t.getTypes().map((m) => m.name)).toEqual(['A', 'B']);
    expect(mutation(s, 'either')?.args.map((a) => `${a.name}: ${a.type}`)).toEqual(['target: String!', 'dir: Dir!', 'mode: String!']);
  });

  it('names an unnamed object by where it was met, and an item of a list in the singular', () => {
    const out = z
      .object({ tables: z.array(z.object({ name: z.string() })), policy: z.object({ on: z.boolean() }) })
      .meta({ title: 'Report' });
    const s = schemaOf(op('report', z.object({ target: z.string() }), out));
    expect(
      String(
        s.getType('Report') &&
          (s.getType('Report') as never as { getFields(): Record<string, { type: unknown }> }).getFields().tables?.type,
      ),
    ).toBe('[ReportTable!]!');
    expect(s.getType('ReportPolicy')).toBeDefined();
  });

  it('follows a recursive shape to itself', () => {
    const Node: z.ZodType = z.lazy(() => z.object({ name: z.string(), children: z.array(Node) }).meta({ id: 'TreeNode' }));
    const s = schemaOf(op('tree', z.object({ target: z.string() }), Node));
    expect(printType(s.getType('TreeNode') as never)).toBe('type TreeNode {\n  name: String!\n  children: [TreeNode!]!\n}');
  });

  it('refuses two different shapes under one name', () => {
    const one = op('one', z.object({ target: z.string() }), z.object({ a: z.string() }).meta({ title: 'Same' }));
    const two = op('two', z.object({ target: z.string() }), z.object({ b: z.string() }).meta({ title: 'Same' }));
    expect(() => graphqlDocument([one, two], OVERLAY)).toThrow(/two different GraphQL types are named Same/);
  });
});
