import { describe, expect, it } from 'vitest';
import { planSchemaChange } from './schema-change.js';
import { parseSchema } from './schema-parser.js';

const v1 = parseSchema(
  'node P { id: string @key\n name: string\n age: int? @range(0, 150)\n role: enum(a, b)? }\nnode Q { id: string @key }',
);

describe('schema change planning', () => {
  it('additive changes keep every table as it is', () => {
    const v2 = parseSchema(
      'node P { id: string @key\n name: string\n age: int? @range(0, 200)\n role: enum(a, b, c)?\n nick: string? }\nnode Q { id: string @key }\nnode R { id: string @key }',
    );
    // R is new: created, not kept.
    expect(planSchemaChange(v1, v2).tables).toEqual({ P: { action: 'keep' }, Q: { action: 'keep' }, R: { action: 'create' } });
  });

  it('tightened constraints need the rows checked', () => {
    const v2 = parseSchema(
      'node P { id: string @key\n name: string @unique\n age: int @range(0, 100)\n role: enum(a)? }\nnode Q { id: string @key }',
    );
    expect(planSchemaChange(v1, v2).tables.P).toEqual({ action: 'check' });
  });

  it('removals and new required properties are refused without a migration, with reasons', () => {
    const v2 = parseSchema('node P { id: string @key\n role: enum(a, b)?\n age: int?\n level: int }');
    let err: unknown;
    try {
      planSchemaChange(v1, v2);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'schema_incompatible' });
    expect((err as { issues: { path: string }[] }).issues.map((i) => i.path).sort()).toEqual(['P.level', 'P.name', 'Q']);
    expect(planSchemaChange(v1, v2, { drop: ['Q', 'P.name'], defaults: { 'P.level': 1 } }).tables).toEqual({
      P: { action: 'rewrite', dropProps: ['name'], defaults: { level: 1 } },
      Q: { action: 'drop' },
    });
  });

  it('refuses type, key and kind changes outright', () => {
    const typeChange = parseSchema(
      'node P { id: string @key\n name: int\n age: int? @range(0, 150)\n role: enum(a, b)? }\nnode Q { id: string @key }',
    );
    expect(() => planSchemaChange(v1, typeChange)).toThrow(/changes type from string to int/);
    const keyChange = parseSchema(
      'node P { id: string\n name: string @key\n age: int? @range(0, 150)\n role: enum(a, b)? }\nnode Q { id: string @key }',
    );
    expect(() => planSchemaChange(v1, keyChange)).toThrow(/key cannot change/);
    expect(() => planSchemaChange(v1, v1, { drop: ['Nope'] })).toThrow(/does not exist/);
  });
});
