import { describe, expect, it } from 'vitest';
import { buildSchema } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { knownTypeNamesOnError } from './known-type-names.js';

const schema = buildSchema(
  'type Person { name: String } input PersonWhere { name: String } type Query { person(where: PersonWhere): Person }',
);
const yogaWith = (plugins: Plugin[]) => createYoga({ schema, plugins, logging: false });

async function answer(yoga: ReturnType<typeof yogaWith>, query: string): Promise<string> {
  const res = await yoga.fetch('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  return `${res.status} ${await res.text()}`;
}

describe('known type names checked only on a miss', () => {
  it("answers every document as graphql-js's own rule does, suggestions included", async () => {
    const plain = yogaWith([]);
    const lazy = yogaWith([knownTypeNamesOnError()]);
    const documents = [
      'query ($w: PersonWhere) { person(where: $w) { name } }',
      'query ($w: PersonWher) { person(where: $w) { name } }',
      'query ($a: Nope, $b: [Persn!]) { person { name } }',
      '{ person { ... on Persn { name } } }',
      'fragment F on Person { name } { person { ...F } }',
      'type Extra { a: Int } { person { name } }',
    ];
    for (const d of documents) expect(await answer(lazy, d)).toBe(await answer(plain, d));
    expect(await answer(lazy, documents[1] as string)).toContain('Did you mean \\"PersonWhere\\" or \\"Person\\"?');
  });
});
