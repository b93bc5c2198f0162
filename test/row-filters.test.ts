/**
 * One filter grammar for row scans on every transport: REST and the CLI
 * take typed GraphQL's `where` shape, keep the older shorthands, and refuse
 * what they cannot apply (unknown operators, values of the wrong type,
 * unknown properties) with `invalid_input` naming the path, never with an
 * empty page. A rows cursor belongs to the ref it was made at.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { runCli } from '../src/cli/run-cli.js';
import { embeddedApi } from '../src/service/api.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n name: string\n age: int? }';

describe('row filters', () => {
  let s: TestServer;
  let rest: RestClient;
  beforeAll(async () => {
    s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    const people: [string, string, number | null][] = [
      ['a', 'Ada', 36],
      ['b', 'Bob', 25],
      ['c', 'Cy', 30],
      ['d', 'Di', null],
    ];
    await api.write({
      branch: 'main',
      ops: people.map(([id, name, age]) => ({ op: 'upsert' as const, table: 'P', values: { id, name, age } })),
    });
    await api.createTag({ name: 'v1', from: { branch: 'main' } });
    rest = new RestClient(s.url);
  });
  afterAll(() => s.close());

  const keysOf = async (where: Record<string, unknown>) => (await rest.rows({ table: 'P', where })).items.map((r) => r.key);
  const refusal = (where: Record<string, unknown>) =>
    rest.rows({ table: 'P', where }).then(
      () => 'answered',
      (e: { code: string; issues?: { path: string }[] }) => `${e.code} ${e.issues?.[0]?.path}`,
    );

  it('regression: REST takes the typed GraphQL shape, and keeps the older shorthands', async () => {
    expect(await keysOf({ age: { gte: 30 } })).toEqual(['a', 'c']);
    expect(await keysOf({ _or: [{ name: { prefix: 'B' } }, { age: { isNull: true } }] })).toEqual(['b', 'd']);
    expect(await keysOf({ age: { op: 'gte', value: 30 } })).toEqual(['a', 'c']);
    expect(await keysOf({ name: 'Cy' })).toEqual(['c']);
    expect(await keysOf({ age: null })).toEqual(['d']);
  });

  it('regression: a filter of the wrong shape or type is refused naming the path, on REST, GraphQL and the CLI', async () => {
    expect(await refusal({ age: 'thirty' })).toBe('invalid_input where.age.eq');
    expect(await refusal({ age: { gte: 'thirty' } })).toBe('invalid_input where.age.gte');
    expect(await refusal({ age: { atLeast: 30 } })).toBe('invalid_input where.age.atLeast');
    expect(await refusal({ nope: 1 })).toBe('invalid_input where.nope');
    const g = await gql(s.url, '{ rows(table: "P", where: {age: "thirty"}) { items { key } } }');
    expect(g.body.errors?.[0]?.extensions?.code).toBe('invalid_input');
    let err = '';
    const io = {
      stdout: () => undefined,
      stderr: (t: string) => {
        err += t;
      },
      stdoutStream: new Writable({ write: (_c, _e, cb) => cb() }),
    };
    const code = await runCli(['rows', 'P', '--where', '{"age":{"gte":"x"}}', '--server', s.url], io);
    expect({ code: code !== 0, err }).toMatchObject({ code: true, err: expect.stringContaining('invalid_input') });
  });

  it('regression: a rows cursor made at one ref is refused at another', async () => {
    const first = await rest.rows({ table: 'P', limit: 1 });
    expect(first.nextCursor).not.toBeNull();
    expect((await rest.rows({ table: 'P', limit: 1, cursor: first.nextCursor as string })).items.map((r) => r.key)).toEqual(['b']);
    await expect(rest.rows({ table: 'P', limit: 1, at: 'tag:v1', cursor: first.nextCursor as string })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });
});
