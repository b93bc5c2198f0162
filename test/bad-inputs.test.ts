/**
 * One catalogue of bad inputs, each replayed through the embedded API, REST, GraphQL and the
 * command line: every transport must answer the same stable code, and nothing stored may change.
 * The embedded API gets no help from an HTTP layer (the service validates what no edge did), and
 * the CLI runs its own argument parsing in front of it, so agreement here is agreement in fact.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run-cli.js';
import { RestClient } from '../src/http/rest-client.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import type { BranchgraphService } from '../src/service/service.js';
import { FsStore } from '../src/store/fs-store.js';
import { listAll } from '../src/store/object-store.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA =
  'node P { id: string @key\n n: int? @range(0, 10)\n s: string?\n j: json?\n c: enum(red, blue)?\n d: date?\n u: string? @unique }\nedge K: P -> P {}';
const LONE = '\ud800';
const DEEP = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
const BIG_KEY = 'k'.repeat(1100);
const NOT_A_COMMIT = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

interface Case {
  name: string;
  code: string;
  api: (api: BranchgraphApi) => Promise<unknown>;
  gql: { query: string; variables?: Record<string, unknown> } | string;
  /** CLI arguments; `@file:TEXT` is written to a file (lone surrogates as WTF-8 bytes) and replaced by its path. */
  cli: string[];
  /** Bodies sent as text, for values no client can serialize (JSON.stringify overflows at 100,000 levels). */
  raw?: { rest: { path: string; body: string; type?: string }; gql: string };
}

const upsert = (values: Record<string, unknown>, table = 'P') => ({ ops: [{ op: 'upsert' as const, table, values }] });
const line = (values: Record<string, unknown>, table = 'P') => `@file:${JSON.stringify({ table, values })}\n`;
const writeDoc = (values: unknown, table = 'P') => ({
  query: 'mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }',
  variables: { i: { ops: [{ op: 'upsert', table, values }] } },
});
const mergeDoc = (input: Record<string, unknown>, source = 'side') => ({
  query: 'mutation($s: String!, $i: MergeInput) { mergeBranch(source: $s, input: $i) { __typename } }',
  variables: { s: source, i: input },
});
/** A bad row written: `write` through the API and GraphQL, `load` of one NDJSON line on the command line. */
const writeCase = (name: string, code: string, values: Record<string, unknown>, table = 'P'): Case => ({
  name,
  code,
  api: (a) => a.write({ branch: 'main', ...upsert(values, table) }),
  gql: writeDoc(values, table),
  cli: ['load', 'main', line(values, table)],
});
const resolution = (value: unknown) => ({ conflicts: [{ table: 'P', key: 'p1', property: 'n', take: 'value' as const, value }] });

const CASES: Case[] = [
  // Malformed text: a lone UTF-16 surrogate anywhere a string goes.
  writeCase('lone surrogate in a value', 'invalid_input', { id: 'x', s: LONE }),
  writeCase('lone surrogate in a key', 'invalid_input', { id: LONE }),
  writeCase('lone surrogate in a property name', 'invalid_input', { id: 'x', [LONE]: 1 }),
  {
    name: 'lone surrogate in a resolution value',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', resolutions: resolution(LONE) }),
    gql: mergeDoc({ resolutions: resolution(LONE) }),
    cli: ['merge', 'side', '--resolutions', `@file:${JSON.stringify(resolution(LONE).conflicts)}`],
  },
  {
    name: 'lone surrogate in a commit message',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', message: `m${LONE}` }),
    gql: mergeDoc({ message: `m${LONE}` }),
    cli: ['merge', 'side', '--message', `m${LONE}`],
  },
  {
    name: 'lone surrogate in a branch name',
    code: 'invalid_input',
    api: (a) => a.createBranch({ name: `b${LONE}` }),
    gql: { query: 'mutation($n: String!) { createBranch(name: $n) { name } }', variables: { n: `b${LONE}` } },
    cli: ['branch', 'create', `b${LONE}`],
  },
  {
    name: 'lone surrogate in a tag message',
    code: 'invalid_input',
    api: (a) => a.createTag({ name: 't1', message: `m${LONE}` }),
    gql: { query: 'mutation($m: String) { createTag(name: "t1", message: $m) { name } }', variables: { m: `m${LONE}` } },
    cli: ['tag', 'create', 't1', '--message', `m${LONE}`],
  },
  {
    name: 'lone surrogate in schema text',
    code: 'invalid_input',
    api: (a) => a.applySchema({ branch: 'main', schema: `${SCHEMA}\nnode Q${LONE} { id: string @key }` }),
    gql: {
      query: 'mutation($i: SchemaApplyInput!) { applySchema(branch: "main", input: $i) { tables } }',
      variables: { i: { schema: `node Q${LONE} { id: string @key }` } },
    },
    cli: ['schema', 'apply', 'main', `@file:node Q${LONE} { id: string @key }`],
  },
  {
    name: 'lone surrogate in a filter',
    code: 'invalid_input',
    api: (a) => a.rows({ table: 'P', at: { branch: 'main' }, where: { s: LONE } }),
    gql: { query: 'query($w: JSON) { rows(table: "P", where: $w) { items { key } } }', variables: { w: { s: LONE } } },
    cli: ['rows', 'P', '--where', JSON.stringify({ s: LONE })],
  },
  // Sizes and depths.
  writeCase('a key over 1 KiB', 'invalid_input', { id: BIG_KEY }),
  writeCase('a row over 1 MiB', 'invalid_input', { id: 'x', s: 'y'.repeat(1_100_000) }),
  writeCase('json nested 100 deep', 'invalid_input', { id: 'x', j: JSON.parse(`${'['.repeat(100)}1${']'.repeat(100)}`) }),
  {
    name: 'a value nested 100,000 deep',
    code: 'invalid_input',
    api: (a) => a.write({ branch: 'main', ...upsert({ id: 'x', j: JSON.parse(DEEP) }) }),
    gql: '',
    cli: ['load', 'main', `@file:{"table":"P","values":{"id":"x","j":${DEEP}}}\n`],
    raw: {
      rest: { path: '/branches/main/writes', body: `{"ops":[{"op":"upsert","table":"P","values":{"id":"x","j":${DEEP}}}]}` },
      gql: `{"query":"mutation($i: WriteInput!) { write(branch: \\"main\\", input: $i) { inserted } }","variables":{"i":{"ops":[{"op":"upsert","table":"P","values":{"id":"x","j":${DEEP}}}]}}}`,
    },
  },
  {
    name: 'a resolution nested 100,000 deep',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', resolutions: resolution(JSON.parse(DEEP)) }),
    gql: '',
    cli: ['merge', 'side', '--resolutions', `@file:[{"table":"P","key":"p1","property":"n","take":"value","value":${DEEP}}]`],
    raw: {
      rest: {
        path: '/branches/side/merge',
        body: `{"resolutions":{"conflicts":[{"table":"P","key":"p1","property":"n","take":"value","value":${DEEP}}]}}`,
      },
      gql: `{"query":"mutation($i: MergeInput) { mergeBranch(source: \\"side\\", input: $i) { __typename } }","variables":{"i":{"resolutions":{"conflicts":[{"table":"P","key":"p1","property":"n","take":"value","value":${DEEP}}]}}}}`,
    },
  },
  {
    name: 'a page limit of 0',
    code: 'invalid_input',
    api: (a) => a.rows({ table: 'P', at: { branch: 'main' }, limit: 0 }),
    gql: '{ rows(table: "P", limit: 0) { items { key } } }',
    cli: ['rows', 'P', '--limit', '0'],
  },
  {
    name: 'a page limit of 1,001',
    code: 'invalid_input',
    api: (a) => a.rows({ table: 'P', at: { branch: 'main' }, limit: 1001 }),
    gql: '{ rows(table: "P", limit: 1001) { items { key } } }',
    cli: ['rows', 'P', '--limit', '1001'],
  },
  {
    name: 'a branch page limit of 1,001',
    code: 'invalid_input',
    api: (a) => a.listBranches({ limit: 1001 }),
    gql: '{ branches(limit: 1001) { items { name } } }',
    cli: ['branch', 'list', '--limit', '1001'],
  },
  {
    name: 'a conflict page of 0',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', conflictLimit: 0 }),
    gql: mergeDoc({ conflictLimit: 0 }),
    cli: ['merge', 'side', '--conflict-limit', '0'],
  },
  {
    name: 'a merge width of 3',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', width: 3 as never }),
    gql: mergeDoc({ width: 3 }),
    cli: ['merge', 'side', '--width', '3'],
  },
  {
    name: 'a diff page of 20,000',
    code: 'invalid_input',
    api: (a) => a.diff({ from: { branch: 'main' }, to: { branch: 'side' }, limit: 20_000 }),
    gql: '{ changes(from: "main", to: "side", limit: 20000) { nextCursor } }',
    cli: ['diff', 'main', 'side', '--limit', '20000'],
  },
  // Unknown names.
  {
    name: 'an unknown table',
    code: 'not_found',
    api: (a) => a.rows({ table: 'Nope', at: { branch: 'main' } }),
    gql: '{ rows(table: "Nope") { items { key } } }',
    cli: ['rows', 'Nope'],
  },
  writeCase('a write to an unknown table', 'constraint_violation', { id: 'x' }, 'Nope'),
  writeCase('an unknown property', 'constraint_violation', { id: 'x', zz: 1 }),
  {
    name: 'an unknown branch',
    code: 'not_found',
    api: (a) => a.rows({ table: 'P', at: { branch: 'nope' } }),
    gql: '{ rows(table: "P", at: "nope") { items { key } } }',
    cli: ['rows', 'P', '--at', 'nope'],
  },
  {
    name: 'an unknown commit',
    code: 'not_found',
    api: (a) => a.rows({ table: 'P', at: { commit: NOT_A_COMMIT } }),
    gql: `{ rows(table: "P", at: "commit:${NOT_A_COMMIT}") { items { key } } }`,
    cli: ['rows', 'P', '--at', `commit:${NOT_A_COMMIT}`],
  },
  {
    name: 'an unknown tag',
    code: 'not_found',
    api: (a) => a.rows({ table: 'P', at: { tag: 'nope' } }),
    gql: '{ rows(table: "P", at: "tag:nope") { items { key } } }',
    cli: ['rows', 'P', '--at', 'tag:nope'],
  },
  {
    name: 'a merge from an unknown branch',
    code: 'not_found',
    api: (a) => a.mergeBranch({ source: 'nope' }),
    gql: mergeDoc({}, 'nope'),
    cli: ['merge', 'nope'],
  },
  {
    name: 'a cherry-pick of an unknown commit',
    code: 'not_found',
    api: (a) => a.cherryPick({ branch: 'main', commit: NOT_A_COMMIT }),
    gql: { query: `mutation { cherryPick(branch: "main", input: { commit: "${NOT_A_COMMIT}" }) { __typename } }` },
    cli: ['cherry-pick', NOT_A_COMMIT, '--onto', 'main'],
  },
  {
    name: 'a resolution naming no conflict',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', resolutions: { conflicts: [{ table: 'P', key: 'zz', property: 'n', take: 'source' }] } }),
    gql: mergeDoc({ resolutions: { conflicts: [{ table: 'P', key: 'zz', property: 'n', take: 'source' }] } }),
    cli: ['merge', 'side', '--resolutions', '@file:[{"table":"P","key":"zz","property":"n","take":"source"}]'],
  },
  // Wrong types and values.
  writeCase('a string for an int', 'constraint_violation', { id: 'x', n: 'five' }),
  writeCase('an int out of its range', 'constraint_violation', { id: 'x', n: 11 }),
  writeCase('a value outside an enum', 'constraint_violation', { id: 'x', c: 'green' }),
  writeCase('an impossible date', 'constraint_violation', { id: 'x', d: '2026-02-30' }),
  {
    name: 'an unknown operation',
    code: 'invalid_input',
    api: (a) => a.write({ branch: 'main', ops: [{ op: 'frob' as never, table: 'P', values: { id: 'x' } }] }),
    gql: {
      query: 'mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }',
      variables: { i: { ops: [{ op: 'frob', table: 'P', values: { id: 'x' } }] } },
    },
    cli: ['load', 'main', '@file:{"op":"frob","table":"P","values":{"id":"x"}}\n'],
  },
  {
    name: 'values that are not an object',
    code: 'invalid_input',
    api: (a) => a.write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: [1] as never }] }),
    gql: {
      query: 'mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }',
      variables: { i: { ops: [{ op: 'upsert', table: 'P', values: [1] }] } },
    },
    cli: ['load', 'main', '@file:{"table":"P","values":[1]}\n'],
  },
  {
    name: 'an unknown strategy',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', resolutions: { strategy: 'mine-wins' as never } }),
    gql: mergeDoc({ resolutions: { strategy: 'mine-wins' } }),
    cli: ['merge', 'side', '--strategy', 'mine-wins'],
  },
  {
    name: 'a diff mode of four dots',
    code: 'invalid_input',
    api: (a) => a.diff({ from: { branch: 'main' }, to: { branch: 'side' }, mode: 'four-dot' as never }),
    gql: '{ changes(from: "main", to: "side", mode: "four-dot") { nextCursor } }',
    cli: ['diff', 'main....side'],
  },
  {
    name: 'a malformed commit id',
    code: 'invalid_input',
    api: (a) => a.rows({ table: 'P', at: { commit: 'nope' } }),
    gql: '{ rows(table: "P", at: "commit:nope") { items { key } } }',
    cli: ['rows', 'P', '--at', 'commit:nope'],
  },
  {
    name: 'a branch name with ..',
    code: 'invalid_input',
    api: (a) => a.createBranch({ name: '../x' }),
    gql: 'mutation { createBranch(name: "../x") { name } }',
    cli: ['branch', 'create', '../x'],
  },
  {
    name: 'a tag name that is not a name',
    code: 'invalid_input',
    api: (a) => a.createTag({ name: ' t' }),
    gql: 'mutation { createTag(name: " t") { name } }',
    cli: ['tag', 'create', ' t'],
  },
  {
    name: 'schema text that does not parse',
    code: 'schema_invalid',
    api: (a) => a.applySchema({ branch: 'main', schema: 'node {' }),
    gql: 'mutation { applySchema(branch: "main", input: { schema: "node {" }) { tables } }',
    cli: ['schema', 'apply', 'main', '@file:node {'],
  },
  {
    name: 'a schema change that drops data',
    code: 'schema_incompatible',
    api: (a) => a.applySchema({ branch: 'main', schema: 'node P { id: string @key }' }),
    gql: 'mutation { applySchema(branch: "main", input: { schema: "node P { id: string @key }" }) { tables } }',
    cli: ['schema', 'apply', 'main', '@file:node P { id: string @key }'],
  },
  {
    name: 'a grace period that is negative',
    code: 'invalid_input',
    api: (a) => a.gc({ graceSeconds: -1, dryRun: true }),
    gql: 'mutation { gc(graceSeconds: -1, dryRun: true) { dryRun } }',
    cli: ['gc', '--grace-seconds', '-1', '--dry-run'],
  },
  // Forged and misplaced cursors.
  {
    name: 'a forged rows cursor',
    code: 'invalid_input',
    api: (a) => a.rows({ table: 'P', at: { branch: 'main' }, cursor: 'AAAA' }),
    gql: '{ rows(table: "P", cursor: "AAAA") { items { key } } }',
    cli: ['rows', 'P', '--cursor', 'AAAA'],
  },
  {
    name: 'a rows cursor passed to another table',
    code: 'invalid_input',
    api: async (a) => a.rows({ table: 'K', at: { branch: 'main' }, cursor: await rowsCursor(a) }),
    gql: 'cursor-of-P-for-K',
    cli: ['rows', 'K', '--cursor', '@cursor'],
  },
  {
    name: 'a bare number as a conflict cursor',
    code: 'invalid_input',
    api: (a) => a.mergeBranch({ source: 'side', conflictCursor: '5' }),
    gql: mergeDoc({ conflictCursor: '5' }),
    cli: ['merge', 'side', '--conflict-cursor', '5'],
  },
  {
    name: 'a forged diff cursor',
    code: 'invalid_input',
    api: (a) => a.diff({ from: { branch: 'main' }, to: { branch: 'side' }, limit: 1, cursor: 'd2.AAAA.000000000000' }),
    gql: '{ changes(from: "main", to: "side", limit: 1, cursor: "d2.AAAA.000000000000") { nextCursor } }',
    cli: ['diff', 'main', 'side', '--limit', '1', '--cursor', 'd2.AAAA.000000000000'],
  },
  {
    name: 'a forged branch cursor',
    code: 'invalid_input',
    api: (a) => a.listBranches({ cursor: 'b2.bWFpbg.000000000000' }),
    gql: '{ branches(cursor: "b2.bWFpbg.000000000000") { items { name } } }',
    cli: ['branch', 'list', '--cursor', 'b2.bWFpbg.000000000000'],
  },
];

/** A real rows cursor of table P (a page of one). */
async function rowsCursor(a: BranchgraphApi): Promise<string> {
  return (await a.rows({ table: 'P', at: { branch: 'main' }, limit: 1 })).nextCursor as string;
}

describe('bad inputs on every transport', () => {
  let dir: string;
  let service: BranchgraphService;
  let embedded: BranchgraphApi;
  let server: TestServer;
  let rest: RestClient;
  let storeBefore: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bg-bad-'));
    service = await serviceOnStore(new FsStore(path.join(dir, 'data')), { actor: 'test', shard: 'embedded' });
    embedded = embeddedApi(service, { transport: 'embedded', actor: 'test' });
    await embedded.applySchema({ branch: 'main', schema: SCHEMA });
    await embedded.write({
      branch: 'main',
      ops: ['p1', 'p2', 'p3'].map((id) => ({ op: 'upsert' as const, table: 'P', values: { id, n: 1 } })),
    });
    await embedded.write({
      branch: 'main',
      ops: [
        { op: 'upsert', table: 'K', values: { from: 'p1', to: 'p2' } },
        { op: 'upsert', table: 'K', values: { from: 'p2', to: 'p3' } },
      ],
    });
    await embedded.createBranch({ name: 'side' });
    await embedded.write({ branch: 'side', ...upsert({ id: 'p1', n: 2 }) });
    await embedded.write({ branch: 'main', ...upsert({ id: 'p1', n: 3 }) });
    server = await testServer({ store: `file://${path.join(dir, 'data')}` });
    rest = new RestClient(server.url);
    // Compared once both processes are idle (event confirmations, hints): never after a wait for time.
    await Promise.all([service.idle(), server.service.idle()]);
    storeBefore = await storeKeys(dir);
  });
  afterAll(async () => {
    await server.close();
    await service.close();
  });

  const storeKeys = async (d: string): Promise<string> =>
    (await listAll(new FsStore(path.join(d, 'data')), ''))
      .map((o) => o.key)
      .filter((k) => !k.startsWith('hints/') && !k.startsWith('clock/'))
      .join('\n');

  async function codeOf(call: () => Promise<unknown>): Promise<string> {
    try {
      await call();
      return 'no error';
    } catch (e) {
      return isBranchgraphError(e) ? e.code : `untyped: ${String(e)}`;
    }
  }

  /** Text as UTF-8, but a lone surrogate as its three WTF-8 bytes: what a file holding one looks like. */
  function wtf8(text: string): Buffer {
    const out: number[] = [];
    for (const ch of text) {
      const cu = ch.charCodeAt(0);
      if (ch.length === 1 && cu >= 0xd800 && cu <= 0xdfff) out.push(0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 0x3f), 0x80 | (cu & 0x3f));
      else out.push(...Buffer.from(ch, 'utf8'));
    }
    return Buffer.from(out);
  }

  async function restCode(c: Case): Promise<string> {
    if (c.raw === undefined) return codeOf(() => c.api(rest));
    const r = await fetch(`${server.url}${c.raw.rest.path}`, {
      method: 'POST',
      headers: { 'content-type': c.raw.rest.type ?? 'application/json' },
      body: c.raw.rest.body,
    });
    return r.status >= 500 ? `HTTP ${r.status}` : (((await r.json()) as { error?: { code: string } }).error?.code ?? 'no error');
  }

  async function gqlCode(c: Case): Promise<string> {
    if (c.raw !== undefined) {
      const r = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: c.raw.gql });
      const body = (await r.json()) as { errors?: { extensions?: { code?: string } }[] };
      return r.status >= 500 ? `HTTP ${r.status}` : (body.errors?.[0]?.extensions?.code ?? 'no error');
    }
    let doc = c.gql;
    if (doc === 'cursor-of-P-for-K')
      doc = { query: 'query($c: String) { rows(table: "K", cursor: $c) { items { key } } }', variables: { c: await rowsCursor(embedded) } };
    const { query, variables } = typeof doc === 'string' ? { query: doc, variables: {} } : doc;
    const r = await gql(server.url, query, variables);
    const code = (r.body.errors as { extensions?: { code?: string } }[] | undefined)?.[0]?.extensions?.code;
    return r.status >= 500 ? `HTTP ${r.status}` : (code ?? 'no error');
  }

  async function cliCode(c: Case): Promise<string> {
    const args: string[] = [];
    for (const a of c.cli) {
      if (a.startsWith('@file:')) {
        const f = path.join(dir, `in-${args.length}-${Math.random().toString(36).slice(2)}`);
        await writeFile(f, wtf8(a.slice('@file:'.length)));
        args.push(f);
      } else args.push(a === '@cursor' ? await rowsCursor(embedded) : a);
    }
    let stderr = '';
    const io = {
      stdout: () => undefined,
      stderr: (t: string) => {
        stderr += t;
      },
      stdoutStream: new Writable({ write: (_c, _e, cb) => cb() }),
    };
    const exit = await runCli(['--store', `file://${path.join(dir, 'data')}`, ...args], io);
    return exit === 0 ? 'no error' : (/error \[(\w+)\]/.exec(stderr)?.[1] ?? `exit ${exit}: ${stderr.slice(0, 200)}`);
  }

  it(`holds at least 40 cases`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: the same code embedded, over REST, over GraphQL and on the command line',
    async (_name, c) => {
      const codes = {
        embedded: await codeOf(() => c.api(embedded)),
        rest: await restCode(c),
        graphql: await gqlCode(c),
        cli: await cliCode(c),
      };
      expect(codes).toEqual({ embedded: c.code, rest: c.code, graphql: c.code, cli: c.code });
    },
  );

  it('changed nothing stored', async () => {
    await Promise.all([service.idle(), server.service.idle()]);
    expect(await storeKeys(dir)).toBe(storeBefore);
  });
});
