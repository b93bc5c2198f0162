import { describe, expect, it } from 'vitest';
import { buildSchema, GraphQLSchema, printSchema, specifiedDirectives, validateSchema, type GraphQLObjectType } from 'graphql';
import { parseSchema } from '../model/schema-parser.js';
import { assembleSchema, type SchemaRoots } from './schema-assembly.js';
import { buildTypedSchema } from './typed-schema.js';

/** Run the assembly to its end, counting its steps. */
function assembled(roots: SchemaRoots): { schema: GraphQLSchema; steps: number } {
  const steps = assembleSchema(roots);
  for (let n = 0; ; n++) {
    const r = steps.next();
    if (r.done === true) return { schema: r.value, steps: n };
  }
}

/** The schema graphql-js's constructor makes of the same roots. */
const constructed = (roots: SchemaRoots): GraphQLSchema =>
  new GraphQLSchema({ ...roots, directives: [...roots.directives], assumeValid: true });

/** Every field the constructor set, equal, and the type map in the same order, holding the same types. */
function expectSame(ours: GraphQLSchema, theirs: GraphQLSchema): void {
  const a = ours as unknown as Record<string, unknown>;
  const b = theirs as unknown as Record<string, unknown>;
  expect(Object.getPrototypeOf(ours)).toBe(GraphQLSchema.prototype);
  expect(Object.keys(a)).toEqual(Object.keys(b));
  expect(Object.keys(ours.getTypeMap())).toEqual(Object.keys(theirs.getTypeMap()));
  for (const [name, type] of Object.entries(theirs.getTypeMap())) expect(ours.getType(name)).toBe(type);
  for (const key of Object.keys(b)) expect(a[key], key).toEqual(b[key]);
  expect(printSchema(ours)).toBe(printSchema(theirs));
}

const rootsOf = (s: GraphQLSchema): SchemaRoots => ({
  query: s.getQueryType() as GraphQLObjectType,
  mutation: s.getMutationType() ?? undefined,
  directives: s.getDirectives(),
});

const GRAPH = `node Person {
  id: string @key
  name: string
  email: string? @unique
  age: int?
  kind: enum(human, robot)?
  bio: string? @search
  emb: vector(3)? @index(metric: cosine)
  extra: json?
  born: date?
}
node City {
  id: string @key
  name: string
}
edge Knows: Person -> Person { since: date? }
edge LivesIn: Person -> City`;

describe('a schema assembled a type at a time', () => {
  it("is the constructor's schema of a generated typed API, field by field, its types in the same order", () => {
    const typed = buildTypedSchema(parseSchema(GRAPH)).schema;
    const roots = rootsOf(typed);
    const { schema, steps } = assembled(roots);
    expectSame(schema, constructed(roots));
    // A step per type: no step walks more than one type's fields.
    expect(steps).toBe(Object.keys(schema.getTypeMap()).length);
    expect(validateSchema(new GraphQLSchema({ ...schema.toConfig(), assumeValid: false }))).toEqual([]);
  });

  it("is the constructor's schema with interfaces, an interface on an interface, unions and input objects", () => {
    const source = buildSchema(`
      directive @tag(by: Who) on FIELD
      input Who { name: String, next: Who }
      interface Node { id: ID! }
      interface Named implements Node { id: ID! name: String }
      type Person implements Node & Named { id: ID! name: String friends: [Thing!] }
      type Robot implements Node { id: ID! model: String }
      union Thing = Person | Robot
      input Filter { name: String, and: [Filter!] }
      type Query { node(id: ID!): Node things(where: Filter): [Thing] named: Named }
      type Mutation { rename(id: ID!, to: String!): Person }
    `);
    const roots = rootsOf(source);
    const { schema } = assembled(roots);
    expectSame(schema, constructed(roots));
    expect(schema.getImplementations(schema.getType('Node') as never).objects.map((t) => t.name)).toEqual(['Person', 'Robot']);
    expect(schema.getImplementations(schema.getType('Node') as never).interfaces.map((t) => t.name)).toEqual(['Named']);
    expect(schema.isSubType(schema.getType('Thing') as never, schema.getType('Robot') as never)).toBe(true);
  });

  it('refuses two types of one name, as the constructor does', () => {
    const a = buildSchema('type Query { a: T } type T { x: Int }');
    const b = buildSchema('type Query { b: T } type T { y: Int }');
    const query = buildSchema('type Query { a: Int }').getQueryType() as GraphQLObjectType;
    const roots: SchemaRoots = {
      query: Object.assign(Object.create(Object.getPrototypeOf(query)), query, {
        getFields: () => ({ ...(a.getQueryType()?.getFields() ?? {}), ...(b.getQueryType()?.getFields() ?? {}) }),
      }),
      directives: specifiedDirectives,
    };
    expect(() => constructed(roots)).toThrow(/multiple types named "T"/);
    expect(() => assembled(roots)).toThrow(/multiple types named "T"/);
  });
});
