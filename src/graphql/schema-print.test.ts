import { describe, expect, it } from 'vitest';
import { buildSchema, printSchema } from 'graphql';
import { parseSchema } from '../model/schema-parser.js';
import { FIELDS_PER_PART, printSchemaInSlices } from './schema-print.js';
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
    // A root of ten parts' fields (id, then f0…: f(k·FIELDS_PER_PART − 1) opens part k), some described, parts opening on them too.
    const opens = (i: number) => (i + 1) % FIELDS_PER_PART === 0 && (i + 1) / FIELDS_PER_PART <= 5;
    const fields = Array.from(
      { length: 10 * FIELDS_PER_PART },
      (_, i) => `${i % 7 === 0 || opens(i) ? `"field ${i}"\n` : ''}f${i}(a: Int = ${i}): String`,
    );
    const wide = buildSchema(`"the root" type Query implements Node { id: ID! ${fields.join('\n')} }\ninterface Node { id: ID! }`);
    for (const schema of [typed, other, wide]) expect(await printSchemaInSlices(schema)).toBe(printSchema(schema));
  });
});
