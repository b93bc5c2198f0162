import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { hasRecursiveVariable } from './jit-execution.js';

const schema = buildSchema(`
  input Self { and: [Self!], name: String }
  input A { b: B }
  input B { a: [A] }
  input Leaf { x: Int }
  input Diamond { left: Mid, right: Mid }
  input Mid { leaf: Leaf, other: Leaf }
  input Outer { inner: Self }
  type Query { f(s: Self, a: A, d: Diamond, o: Outer, n: Int, l: [Leaf!]): Int }
`);

const recursive = (vars: string, operationName?: string) =>
  hasRecursiveVariable(schema, parse(`query Q(${vars}) { f } query R { f }`), operationName ?? 'Q');

describe('hasRecursiveVariable', () => {
  it('finds an input type that contains itself, directly, through a list, or through another type', () => {
    expect(recursive('$s: Self')).toBe(true);
    expect(recursive('$a: A!')).toBe(true);
    expect(recursive('$o: [Outer!]')).toBe(true);
  });

  it('passes scalars, acyclic types (shared fields included) and unknown types', () => {
    expect(recursive('$n: Int, $d: Diamond, $l: [Leaf!]!')).toBe(false);
    expect(recursive('$x: NoSuchType')).toBe(false);
  });

  it('looks only at the operation that runs', () => {
    expect(recursive('$s: Self', 'R')).toBe(false);
  });
});
