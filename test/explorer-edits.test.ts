/**
 * The explorer's edits are typed GraphQL mutations the server runs: spelled by
 * ui/explorer/edit-document.ts with the server's own naming rules, they create, update and
 * delete nodes and edges on a schema built to trip naming (a table whose name another one's
 * family takes, a key named like an argument, enum values GraphQL forbids), and each one is
 * pinned to the head it read: a moved branch refuses it and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typedNames } from '../src/graphql/typed-names.js';
import type { Schema, TableType } from '../src/model/schema.js';
import { RestClient } from '../src/http/rest-client.js';
import { type Edit, editDocument } from '../ui/explorer/edit-document.js';
import { testServer, type TestServer } from './support/test-server.js';

const SCHEMA = `node Person { id: string @key }
node person { at: string @key
  name: string
  mood: enum(true, false, meh)? }
edge likes: person -> person { since: int? }`;

describe('explorer edits', () => {
  let s: TestServer;
  let api: RestClient;
  beforeAll(async () => {
    s = await testServer();
    api = new RestClient(s.url);
    await api.applySchema({ branch: 'main', schema: SCHEMA });
  });
  afterAll(async () => s.close());

  async function edit(table: string, change: Edit, expectedHead?: string): Promise<{ errors?: { extensions?: { code?: string } }[] }> {
    const schema = (await api.getSchema({ at: { branch: 'main' } })).schema as unknown as Schema;
    const t = schema.types.find((x) => x.name === table) as TableType;
    const names = typedNames(schema).get(table);
    if (names === undefined) throw new Error(`no names for ${table}`);
    const head = expectedHead ?? (await api.getBranch({ name: 'main' })).head.id;
    const doc = editDocument({ table: t, names, expectedHead: head, message: `edit ${table}` }, change);
    const res = await fetch(`${s.url}/branches/main/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: doc.query, variables: doc.variables }),
    });
    return (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
  }
  const row = async (table: string, key: string) => (await api.getRow({ table, key, at: { branch: 'main' } })).row;

  it('creates, updates and deletes nodes and edges through the typed API', async () => {
    expect((await edit('person', { kind: 'create', row: { at: 'a', name: 'A', mood: 'true' } })).errors).toBeUndefined();
    expect((await edit('person', { kind: 'create', row: { at: 'b', name: 'B' } })).errors).toBeUndefined();
    expect(await row('person', 'a')).toEqual({ at: 'a', name: 'A', mood: 'true' });
    expect((await edit('likes', { kind: 'create', row: { from: 'a', to: 'b', since: 3 } })).errors).toBeUndefined();
    expect((await edit('person', { kind: 'update', key: { at: 'a' }, set: { name: 'Ay', mood: 'meh' } })).errors).toBeUndefined();
    expect(await row('person', 'a')).toEqual({ at: 'a', name: 'Ay', mood: 'meh' });
    expect((await edit('person', { kind: 'update', key: { at: 'a' }, set: { mood: null } })).errors).toBeUndefined();
    expect((await row('person', 'a')).mood).toBeNull();
    expect((await edit('likes', { kind: 'update', key: { from: 'a', to: 'b' }, set: { since: 4 } })).errors).toBeUndefined();
    expect((await row('likes', '["a","b"]')).since).toBe(4);
    expect((await edit('likes', { kind: 'delete', key: { from: 'a', to: 'b' } })).errors).toBeUndefined();
    await expect(row('likes', '["a","b"]')).rejects.toMatchObject({ code: 'not_found' });
    expect((await edit('Person', { kind: 'create', row: { id: 'P' } })).errors).toBeUndefined();
    expect((await edit('person', { kind: 'delete', key: { at: 'b' } })).errors).toBeUndefined();
    await expect(row('person', 'b')).rejects.toMatchObject({ code: 'not_found' });
    expect(await row('Person', 'P')).toEqual({ id: 'P' });
  });

  it('refuses an edit pinned to a head the branch has left, and writes nothing', async () => {
    const before = (await api.getBranch({ name: 'main' })).head.id;
    await api.write({ branch: 'main', ops: [{ op: 'update', table: 'person', values: { at: 'a', name: 'someone else' } }] });
    const after = (await api.getBranch({ name: 'main' })).head.id;
    const refused = await edit('person', { kind: 'update', key: { at: 'a' }, set: { name: 'mine' } }, before);
    expect(refused.errors?.[0]?.extensions?.code).toBe('head_moved');
    expect((await api.getBranch({ name: 'main' })).head.id).toBe(after);
    expect((await row('person', 'a')).name).toBe('someone else');
  });
});
