import { describe, expect, it } from 'vitest';
import { parseSchema } from '../model/schema-parser.js';
import type { Schema } from '../model/schema.js';
import { mergeSchemaTypes } from './schema-merge.js';

const schema = (text: string): Schema => parseSchema(text);
const BASE = `node Person { id: string @key
  name: string }
edge Knows: Person -> Person`;

describe('three-way schema merge', () => {
  it('combines disjoint changes: a new table on each side, new properties on each side of one table', () => {
    const source = schema(`${BASE}\nnode Company { id: string @key }`.replace('name: string }', 'name: string\n  age: int? }'));
    const target = schema(`${BASE}\nnode Team { id: string @key }`.replace('name: string }', 'name: string\n  email: string? @unique }'));
    const r = mergeSchemaTypes(schema(BASE), source, target);
    const types = 'schema' in r ? r.schema.types : [];
    expect(types.map((t) => t.name).sort()).toEqual(['Company', 'Knows', 'Person', 'Team']);
    expect(types.find((t) => t.name === 'Person')?.props.map((p) => p.name)).toEqual(['id', 'name', 'email', 'age']);
  });

  it("takes one side's change to a property, and the same change made on both sides once", () => {
    const tightened = schema(BASE.replace('name: string }', 'name: string\n  age: int? @range(0, 150) }'));
    const loose = schema(BASE.replace('name: string }', 'name: string\n  age: int? }'));
    const r = mergeSchemaTypes(
      loose,
      tightened,
      schema(`${BASE.replace('name: string }', 'name: string\n  age: int? }')}\nnode Team { id: string @key }`),
    );
    expect('schema' in r && r.schema.types.find((t) => t.name === 'Person')?.props.find((p) => p.name === 'age')?.range).toEqual({
      min: 0,
      max: 150,
    });
    expect(mergeSchemaTypes(loose, tightened, tightened)).toEqual({ schema: tightened });
  });

  it('reports what both sides changed differently, with the definitions, and a type removed on one side but changed on the other', () => {
    const base = schema(BASE.replace('name: string }', 'name: string\n  age: int? }'));
    const s = schema(BASE.replace('name: string }', 'name: string\n  age: float? }'));
    const t = schema(
      `${BASE.replace('name: string }', 'name: string\n  age: string? }')}`.replace(
        'edge Knows: Person -> Person',
        'edge Knows: Person -> Person @cardinality(0, 5)',
      ),
    );
    const withoutKnows = schema(
      BASE.replace('name: string }', 'name: string\n  age: float? }').replace('edge Knows: Person -> Person', ''),
    );
    const r = mergeSchemaTypes(base, withoutKnows, t);
    expect('conflicts' in r && r.conflicts.map((c) => [c.kind, c.table, c.property, c.message]).sort()).toEqual([
      ['SchemaConflict', 'Knows', null, 'Knows: removed on the source and changed on the target'],
      ['SchemaConflict', 'Person', 'age', 'Person.age: it was changed differently on the source and on the target'],
    ]);
    const both = mergeSchemaTypes(base, s, t);
    expect('conflicts' in both && both.conflicts[0]).toMatchObject({
      base: { name: 'age', type: { kind: 'int' } },
      source: { type: { kind: 'float' } },
      target: { type: { kind: 'string' } },
    });
  });
});
