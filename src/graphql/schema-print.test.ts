import { describe, expect, it } from 'vitest';
import { buildSchema, printSchema } from 'graphql';
import { parseSchema } from '../model/schema-parser.js';
import { printSchemaInSlices } from './schema-print.js';
import { buildTypedSchema } from './typed-schema.js';

describe('a schema printed a batch of types at a time', () => {
  it("is printSchema's text, for a generated schema of many batches and for one with every kind of type", async () => {
    const typed = buildTypedSchema(
      parseSchema(
        `${Array.from({ length: 120 }, (_, i) => `node T${i} { id: string @key\n v: int? @range(0, 9)\n kind: enum(a, b)? }`).join('\n')}\nedge E: T0 -> T1 { w: float? }`,
      ),
    ).schema;
    const other = buildSchema(`
      "described" directive @tag(by: String = "x") repeatable on FIELD | OBJECT
      scalar When @specifiedBy(url: "https://example.com")
      interface Node { id: ID! }
      type Person implements Node @tag { id: ID! name(upper: Boolean = false): String @deprecated(reason: "old") when: When }
      union Thing = Person
      enum Kind { A B @deprecated }
      input Filter { name: String = "a", and: [Filter!] }
      type Query { node(id: ID!): Node things(where: Filter): [Thing] kind: Kind }
    `);
    for (const schema of [typed, other]) expect(await printSchemaInSlices(schema)).toBe(printSchema(schema));
  });
});
