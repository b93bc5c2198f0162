/**
 * The command line in-process (test/cli.test.ts runs the built binary):
 * help and version, every kind of mistake with its message and exit code,
 * and the README's round against a server, through the environment
 * variables, with readable output and `--json`.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import { testServer, type TestServer } from '../../test/support/test-server.js';
import { hookReceiver } from '../../test/support/hook-receiver.js';
import { packageVersion } from '../service/package-root.js';
import { COMPACT_RUN_ROWS } from '../table/run.js';
import { EXIT } from './exit-codes.js';
import { runCli } from './run-cli.js';

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string; bytes: Buffer }> {
  let stdout = '';
  let stderr = '';
  const chunks: Buffer[] = [];
  const stdoutStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  const io = {
    stdout: (t: string) => {
      stdout += t;
    },
    stderr: (t: string) => {
      stderr += t;
    },
    stdoutStream,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr, bytes: Buffer.concat(chunks) };
}

const COMMANDS = [
  'serve',
  'branch',
  'branch list',
  'branch create',
  'branch delete',
  'merge',
  'rows',
  'get',
  'log',
  'history',
  'blame',
  'merge-base',
  'request',
  'request open',
  'request list',
  'request show',
  'request revise',
  'request review',
  'request resolve',
  'request merge',
  'request check',
  'request close',
  'hook',
  'hook add',
  'hook list',
  'hook remove',
  'hook dead-letters',
  'branch protect',
  'branch unprotect',
  'show',
  'diff',
  'load',
  'ingest',
  'catchup',
  'wal',
  'compact',
  'export',
  'schema',
  'schema get',
  'schema apply',
  'gc',
  'gqt',
  'show-object',
];

describe('command line: help, version and mistakes', () => {
  it('gives --help for the program and every command, with exit 0', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('exit codes:');
    for (const c of COMMANDS) {
      const r = await cli([...c.split(' '), '--help']);
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toMatch(new RegExp(`^Usage: branchgraph ${c} `));
    }
    expect((await cli(['serve', '--help'])).stdout).toContain('BRANCHGRAPH_STORE');
  });

  it('prints the version', async () => {
    const r = await cli(['--version']);
    expect([r.code, r.stdout.trim()]).toEqual([0, packageVersion()]);
  });

  it('reports usage mistakes with exit 2 and says what was wrong', async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage: branchgraph/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['branch', 'list', '--frob'], /unknown option '--frob'/],
      [['merge'], /missing required argument 'source'/],
      [['rows', 'Person', '--limit', 'ten'], /--limit must be a whole number, not "ten"/],
      [['rows', 'Person', '--where', '{nope'], /--where must be a JSON object/],
      [['export', 'Person', '--format', 'xlsx'], /argument 'xlsx' is invalid. Allowed choices are ndjson, arrow, arrow-stream, parquet/],
      [['load', 'main', '/no/such/file.ndjson'], /cannot read \/no\/such\/file.ndjson: no such file/],
      [['merge', 'f', '--width', '3', '--store', 'memory://'], /\[invalid_input\]/],
      [['gqt', '--via', 'carrier-pigeon'], /argument 'carrier-pigeon' is invalid. Allowed choices are embedded, rest, graphql/],
      [['gqt', '--via', 'rest', '--store', 'memory'], /memory store lives inside one process/],
      [['gqt', '--store', 'disk'], /gqt --store must be memory, fs or s3, not "disk"/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(EXIT.usage);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('with --json, tells every error as the envelope the other transports answer, with the same exit code', async () => {
    const cases: [string[], string, number][] = [
      [['frobnicate', '--json'], 'invalid_input', EXIT.usage],
      [['--json', 'branch', 'list', '--frob'], 'invalid_input', EXIT.usage],
      [['--json', 'rows', 'Person', '--limit', 'ten'], 'invalid_input', EXIT.usage],
      [['--json', 'load', 'main', '/no/such/file.ndjson'], 'invalid_input', EXIT.usage],
      [['--json', '--store', 'memory://', 'rows', 'Nope'], 'not_found', EXIT.notFound],
      [['--json', '--server', 'http://127.0.0.1:1', 'branch', 'list'], 'server_unreachable', EXIT.unreachable],
    ];
    for (const [args, code, exit] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(exit);
      // One line a program parses whole: nothing before or after the envelope.
      const lines = r.stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      const body = JSON.parse(lines[0] ?? '') as { error: { code: string; message: string } };
      expect(body.error.code, args.join(' ')).toBe(code);
      expect(body.error.message.length, args.join(' ')).toBeGreaterThan(0);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('names the URL when no server answers, with exit 5', async () => {
    // A port nothing listens on: taken and let go again.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const r = await cli(['branch', 'list', '--server', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(EXIT.unreachable);
    expect(r.stderr).toBe(
      `error [server_unreachable]: cannot reach the server at http://127.0.0.1:${port} (GET /branches): ECONNREFUSED\n`,
    );
  });
});

describe('command line: the embedded engine', () => {
  it('drives a branch → load → merge round and the WAL on a local store, with exit codes', async () => {
    const codeOf = async (args: string[]): Promise<string> => {
      const r = await cli(args);
      return r.code === 0 ? '0' : `${r.code}: ${r.stderr}`;
    };
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-embedded-'));
    const store = ['--store', `file://${dir}/data`];
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    await writeFile(path.join(dir, 'people.ndjson'), '{"table":"Person","values":{"id":"a","name":"Ann"}}\n');
    expect(await codeOf(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), ...store])).toBe('0');
    expect(await codeOf(['branch', 'create', 'feature', ...store])).toBe('0');
    expect(await codeOf(['load', 'feature', path.join(dir, 'people.ndjson'), ...store])).toBe('0');
    const merged = await cli(['merge', 'feature', '--width', '4', '--json', ...store]);
    expect(merged.code).toBe(0);
    expect(JSON.parse(merged.stdout)).toMatchObject({ status: 'success', outcome: 'fast_forward' });
    const branches = JSON.parse((await cli(['branch', 'list', '--json', ...store])).stdout) as { name: string }[];
    expect(branches.map((b) => b.name)).toEqual(['feature', 'main']);
    const bad = await cli(['merge', 'feature', '--width', '3', ...store]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid_input');
    expect((await cli(['frobnicate'])).code).toBe(2);
    // WAL: ingest streams a file into this shard; status shows it pending; catch-up folds it.
    await writeFile(
      path.join(dir, 'more.ndjson'),
      '{"table":"Person","values":{"id":"b","name":"Bo"}}\n{"table":"Person","values":{"id":"c","name":"Cy"}}\n',
    );
    const ingested = await cli(['ingest', 'main', path.join(dir, 'more.ndjson'), '--shard', 'cli-1', '--json', ...store]);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ shard: 'cli-1', operations: 2, inserted: 2 });
    expect(JSON.parse((await cli(['wal', 'main', '--json', ...store])).stdout)).toMatchObject({
      pendingGenerations: 1,
      shards: [{ shard: 'cli-1', pendingGenerations: 1 }],
    });
    expect(JSON.parse((await cli(['catchup', 'main', '--serial', '--json', ...store])).stdout)).toMatchObject({
      outcome: 'caught_up',
      generations: 1,
      pendingAfter: 0,
    });
    expect((await cli(['catchup', 'main', '--max-generations', 'x', ...store])).code).toBe(2);
  });

  it('searches, walks and counts a local store, in words and as JSON', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-search-'));
    const store = ['--store', `file://${dir}/data`];
    await writeFile(
      path.join(dir, 'schema.bg'),
      'node Person { id: string @key\n name: string @search\n age: int? }\nedge Knows: Person -> Person\n',
    );
    await writeFile(
      path.join(dir, 'rows.ndjson'),
      [
        '{"table":"Person","values":{"id":"ada","name":"Ada Lovelace","age":36}}',
        '{"table":"Person","values":{"id":"bob","name":"Bob","age":40}}',
        '{"table":"Knows","values":{"from":"ada","to":"bob"}}',
        '',
      ].join('\n'),
    );
    expect((await cli(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), ...store])).code).toBe(0);
    expect((await cli(['load', 'main', path.join(dir, 'rows.ndjson'), ...store])).code).toBe(0);
    const found = await cli(['search', 'Person', 'lovelace', ...store]);
    expect(found.stdout).toMatch(/^1\. ada {2}score [\d.]+ {2}bm25 [\d.]+\n {3}name: Ada \[Lovelace\]\n$/);
    expect((await cli(['path', 'Person/ada', 'Person/bob', ...store])).stdout).toBe('Person/ada -Knows- Person/bob\n');
    expect((await cli(['path', 'Person/bob', 'Person/ada', ...store])).stdout).toBe('no path\n');
    const hood = JSON.parse((await cli(['neighborhood', 'Person/bob', '--json', ...store])).stdout) as {
      nodes: { key: string; depth: number }[];
    };
    expect(hood.nodes.map((n) => [n.key, n.depth])).toEqual([
      ['bob', 0],
      ['ada', 1],
    ]);
    expect((await cli(['aggregate', 'Person', '--count-only', ...store])).stdout).toBe('count 2 (statistics)\n');
    expect(JSON.parse((await cli(['aggregate', 'Person', '--json', ...store])).stdout)).toMatchObject({
      count: 2,
      numbers: { age: { sum: 76, avg: 38 } },
    });
    const bad = await cli(['path', 'ada', 'Person/bob', ...store]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error [invalid_input]: from must be TABLE/KEY, such as Person/ada, not "ada"');
  });

  it('show-object prints a stored object as the text it holds, compressed or not, and refuses what is not one', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-object-'));
    const data = path.join(dir, 'data');
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    // One row makes a compact run; the rest, more than a compact run holds, an Arrow file.
    const rows = Array.from(
      { length: COMPACT_RUN_ROWS + 6 },
      (_, i) => `{"table":"Person","values":{"id":"p${String(i).padStart(3, '0')}","name":"P"}}`,
    );
    await writeFile(path.join(dir, 'one.ndjson'), `${rows[0]}\n`);
    await writeFile(path.join(dir, 'many.ndjson'), `${rows.slice(1).join('\n')}\n`);
    expect((await cli(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), '--store', `file://${data}`])).code).toBe(0);
    expect((await cli(['load', 'main', path.join(dir, 'one.ndjson'), '--store', `file://${data}`])).code).toBe(0);
    expect((await cli(['load', 'main', path.join(dir, 'many.ndjson'), '--store', `file://${data}`])).code).toBe(0);
    const files = (await readdir(data, { recursive: true })).map((f) => path.join(data, f));
    const manifest = files
      .filter((f) => f.includes(`manifests${path.sep}`) && f.endsWith('.json~'))
      .sort()
      .at(-1) as string;
    const shown = await cli(['show-object', manifest]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ format: 3, commit: { kind: 'write' }, $checksum: expect.any(String) });
    const compact = await cli(['show-object', files.find((f) => f.endsWith('.rows.json~')) as string]);
    expect(JSON.parse(compact.stdout)).toMatchObject({
      format: 'branchgraph.rows/1',
      table: 'Person',
      rows: [['p000', 0, expect.any(String), { id: 'p000' }]],
    });
    const arrow = await cli(['show-object', files.find((f) => f.endsWith('.arrow~')) as string]);
    expect([arrow.code, arrow.stderr]).toEqual([EXIT.usage, expect.stringContaining('not a stored JSON object')]);
    const missing = await cli(['show-object', path.join(dir, 'nothing')]);
    expect([missing.code, missing.stderr]).toEqual([EXIT.usage, expect.stringContaining('no such file')]);
  });
});

describe('command line: a round against a server', () => {
  let s: TestServer;
  let dir: string;
  const env = { server: process.env.BRANCHGRAPH_SERVER, token: process.env.BRANCHGRAPH_TOKEN };
  beforeAll(async () => {
    s = await testServer({ tokens: 'admin:cli-admin-token,write:cli-review-token:rita', env: { BRANCHGRAPH_HOOK_ALLOWLIST: '127.0.0.1' } });
    dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-'));
    // --server and --token from the environment, as a shell profile would set them.
    process.env.BRANCHGRAPH_SERVER = s.url;
    process.env.BRANCHGRAPH_TOKEN = 'cli-admin-token';
  });
  afterAll(async () => {
    for (const [k, v] of [
      ['BRANCHGRAPH_SERVER', env.server],
      ['BRANCHGRAPH_TOKEN', env.token],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    await s.close();
  });

  it("runs the README's sequence with the example files: schema, load, branch, conflict, rows, log, show, diff, export", async () => {
    const ok = async (args: string[]): Promise<string> => {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    expect(await ok(['schema', 'apply', 'main', 'examples/schema.bg'])).toMatch(/^applied as [0-9A-Z]{26}\n/);
    expect(await ok(['load', 'main', 'examples/people.ndjson'])).toMatch(/^committed [0-9A-Z]{26}: 4 inserted, 0 updated, 0 deleted\n$/);
    expect(await ok(['branch', 'create', 'review'])).toMatch(/^branch review at /);
    await ok(['load', 'review', 'examples/ann-31.ndjson']);
    await ok(['load', 'main', 'examples/ann-32.ndjson']);

    const merge = await cli(['merge', 'review']);
    expect(merge.code).toBe(EXIT.conflicts);
    expect(merge.stdout).toMatch(
      /^conflicts: 1; nothing was published\nKIND +TABLE +KEY +PROPERTY +BASE +SOURCE +TARGET\nDivergentUpdate +Person +ann +age +30 +31 +32\n$/,
    );
    const asJson = await cli(['merge', 'review', '--json']);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ status: 'conflicts', report: { total: 1 } });

    // Resolve it from a file of choices, pinned to the previewed heads; a stale pin is refused.
    const preview = JSON.parse(asJson.stdout) as { sourceHead: string; targetHead: string };
    const choices = path.join(dir, 'choices.json');
    await writeFile(
      choices,
      JSON.stringify([
        { table: 'Person', key: 'ann', property: 'age', take: 'value', value: 32, expected: { base: 30, source: 31, target: 32 } },
      ]),
    );
    const stale = await cli(['merge', 'review', '--resolutions', choices, '--expect-target-head', preview.sourceHead]);
    expect([stale.code, stale.stderr]).toEqual([EXIT.failed, expect.stringMatching(/^error \[head_moved\]/)]);
    const landed = await cli([
      'merge',
      'review',
      '--resolutions',
      choices,
      '--expect-source-head',
      preview.sourceHead,
      '--expect-target-head',
      preview.targetHead,
      '--dry-run',
    ]);
    expect(landed.stdout).toMatch(/^dry run: would be merged \(source [0-9A-Z]{26}, target [0-9A-Z]{26}\); 1 conflict\(s\) resolved\n/);
    const bad = await cli(['merge', 'review', '--strategy', 'mine-wins']);
    expect([bad.code, bad.stderr]).toEqual([
      EXIT.usage,
      expect.stringContaining('error [invalid_input]: invalid flags: flags.resolutions.strategy'),
    ]);

    expect(await ok(['rows', 'Person', '--limit', '2'])).toMatch(
      /^KEY +ID +NAME +AGE +EMAIL\nann +ann +Ann +32 +ann@example\.com\nbob +bob +Bob\nmore: --cursor \S+\n$/,
    );
    expect(await ok(['rows', 'Person', '--where', '{"name":"Cy"}', '--json'])).toContain('"cy@example.com"');
    expect(JSON.parse(await ok(['get', 'Person', 'ann', '--at', 'review', '--json']))).toEqual({
      key: 'ann',
      row: { id: 'ann', name: 'Ann', age: 31, email: null },
    });
    const missing = await cli(['get', 'Person', 'zed']);
    expect([missing.code, missing.stderr]).toEqual([EXIT.notFound, 'error [not_found]: Person zed does not exist\n']);

    const log = (JSON.parse(await ok(['log', '--json'])) as { commits: { id: string; kind: string }[] }).commits;
    expect(log.map((c) => c.kind)).toEqual(['write', 'write', 'schema', 'init']);
    expect(await ok(['log', '--limit', '1'])).toMatch(
      new RegExp(`^ID +KIND +TIME +AUTHOR +MESSAGE\n[0-9A-Z]{26} +write +.*\nmore: --cursor \\S+ --at commit:${log[0]?.id}\n$`),
    );
    expect((JSON.parse(await ok(['log', '--table', 'Person', '--kind', 'schema', '--json'])) as { commits: unknown[] }).commits).toEqual(
      [],
    );
    expect(await ok(['history', 'Person', 'ann', '--limit', '1'])).toMatch(
      /^COMMIT +TIME +AUTHOR +CHANGE +CHANGED +MESSAGE\n[0-9A-Z]{26} .* updated +age: 30 → 32, email: → ann@example.com +bulk load\nmore: --cursor /,
    );
    expect(await ok(['blame', 'Person', 'ann'])).toMatch(/^PROPERTY +VALUE +COMMIT +TIME +AUTHOR +MESSAGE\n(age|email|id|name) /);
    // One base per line, as git merge-base --all prints them.
    expect(await ok(['merge-base', 'main', 'main'])).toMatch(/^[0-9A-Z]{26}\n$/);
    expect(await ok(['show', `commit:${log[0]?.id}`])).toMatch(new RegExp(`^id: +${log[0]?.id}\nkind: +write\n`));
    expect(await ok(['diff', 'main', 'review'])).toBe(
      'Person: 0 inserted, 1 updated, 0 deleted\n  ~ ann  age: 32 → 31, email: ann@example.com → \n',
    );
    expect(await ok(['compact', 'main', '--full', '--json'])).toContain('"tables"');

    const out = path.join(dir, 'people.arrow');
    expect(await ok(['export', 'Person', '--format', 'arrow', '--out', out])).toMatch(/format: +arrow\n/);
    expect(
      tableFromIPC(await readFile(out))
        .getChild('id')
        ?.toArray(),
    ).toEqual(['ann', 'bob', 'cy']);
    const piped = await cli(['export', 'Knows', '--format', 'ndjson', '--out', '-']);
    expect(piped.bytes.toString()).toBe('{"from":"ann","to":"bob","since":"2024-05-01"}\n');

    // Land the resolved merge: the commit shows what was resolved and how.
    const real = await cli(['merge', 'review', '--resolutions', choices, '--json']);
    const commitId = (JSON.parse(real.stdout) as { commit: { id: string } }).commit.id;
    expect(await ok(['show', commitId])).toMatch(
      /\nresolved 1 conflict\(s\):\nTABLE +KEY +PROPERTY +KIND +TAKE +BY\nPerson +ann +age +DivergentUpdate +value +choice\n$/,
    );
  });

  it('draws the progress of a merge and a load with --progress, and lists the operations it followed', async () => {
    await cli(['branch', 'create', 'wide']);
    const rows = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ table: 'Person', values: { id: `p${i}`, name: `P${i}` } })).join(
      '\n',
    );
    const file = path.join(dir, 'wide.ndjson');
    await writeFile(file, rows);
    const load = await cli(['load', 'wide', file, '--progress']);
    expect(load.code, load.stderr).toBe(0);
    // The last line is the final state: every row through its last phase, counted once (3,000 rows, not twice that).
    expect(load.stderr.trim().split('\n').at(-1)).toBe('load into wide (write) [##############################] 100% 3,000 of 3,000 rows');
    // The target moves too, so the merge is three-way and walks the load's rows.
    const other = path.join(dir, 'other.ndjson');
    await writeFile(other, JSON.stringify({ table: 'Person', values: { id: 'zz', name: 'Z' } }));
    expect((await cli(['load', 'main', other])).code).toBe(0);
    const merge = await cli(['merge', 'wide', '--progress', '--json']);
    expect(merge.code, merge.stderr).toBe(0);
    expect(merge.stderr.trim().split('\n').at(-1)).toBe('merge wide -> main [##############################] 100% 3,001 of 3,001 rows');
    const ops = (await (await fetch(`${s.url}/operations`, { headers: { authorization: 'Bearer cli-admin-token' } })).json()) as {
      operations: { kind: string; state: string; rowsDone: number; rowsPlanned: number }[];
    };
    expect(ops.operations.slice(0, 2).map((o) => [o.kind, o.state, o.rowsDone === o.rowsPlanned])).toEqual([
      ['merge', 'succeeded', true],
      ['load', 'succeeded', true],
    ]);
    // No bar without --progress when standard error is not a terminal.
    expect((await cli(['merge', 'wide'])).stderr).toBe('');
  });

  it('runs the team workflow: protect main, open a request, review it as someone else, merge it', async () => {
    const ok = async (args: string[]): Promise<string> => {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    await ok(['branch', 'create', 'team']);
    await ok(['load', 'team', 'examples/ann-31.ndjson']);
    expect(await ok(['branch', 'protect', 'main', '--approvals', '1'])).toMatch(/\nprotected: 1 approval, stale on result_change\n$/);
    const direct = await cli(['load', 'main', 'examples/ann-31.ndjson']);
    expect([direct.code, direct.stderr]).toEqual([
      EXIT.failed,
      expect.stringMatching(/^error \[branch_protected\]: branch main is protected/),
    ]);
    const opened = JSON.parse(await ok(['request', 'open', 'team', '--title', 'ann is 31', '--json'])) as { id: string };
    expect(await ok(['request', 'show', opened.id])).toMatch(
      /\(team -> main, open, by admin-[0-9a-f]{8}\)\n[\s\S]*not mergeable: 0 of 1 required approvals\n$/,
    );
    process.env.BRANCHGRAPH_TOKEN = 'cli-review-token';
    try {
      expect(await ok(['request', 'review', opened.id, '--approve', '--body', 'fine'])).toMatch(/rita +approve +1 +fine/);
    } finally {
      process.env.BRANCHGRAPH_TOKEN = 'cli-admin-token';
    }
    expect(await ok(['request', 'list'])).toMatch(new RegExp(`${opened.id} +open +team +main +admin-[0-9a-f]{8} +true +ann is 31`));
    expect(await ok(['request', 'merge', opened.id, '--delete-branch'])).toMatch(
      /^fast_forward as [0-9A-Z]{26}[\s\S]*\(team -> main, merged/,
    );
    await ok(['branch', 'unprotect', 'main']);
  });

  it('registers a check, requires it on main, and shows its answer on the request', async () => {
    const ok = async (args: string[]): Promise<string> => {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    const rx = await hookReceiver({ status: 200, body: JSON.stringify({ status: 'pass', message: 'green' }) });
    try {
      const added = await ok(['hook', 'add', rx.url, '--check', 'ci']);
      const id = /^([0-9A-Z]{26}) +check /m.exec(added)?.[1] as string;
      expect(added).toMatch(/\nsecret: [A-Za-z0-9_-]{32}\n$/);
      expect(await ok(['hook', 'list'])).toMatch(new RegExp(`${id} +check +${rx.url.replace(/[/.]/g, '\\$&')} +ci +0 +0`));
      expect(await ok(['branch', 'protect', 'main', '--approvals', '0', '--checks', 'ci'])).toMatch(
        /protected: 0 approvals, checks ci, stale on/,
      );
      await ok(['branch', 'create', 'checked']);
      const file = path.join(dir, 'hooked.ndjson');
      await writeFile(file, '{"table":"Person","values":{"id":"hooked","name":"H"}}\n');
      await ok(['load', 'checked', file]);
      const opened = JSON.parse(await ok(['request', 'open', 'checked', '--title', 'checked', '--json'])) as { id: string };
      expect(await ok(['request', 'check', opened.id])).toMatch(/ci:pass\n[\s\S]*mergeable\n$/);
      expect(await ok(['hook', 'dead-letters'])).toBe('no dead letters\n');
      expect(await ok(['hook', 'remove', id])).toBe(`removed hook ${id}\n`);
      await ok(['request', 'close', opened.id]);
      await ok(['branch', 'unprotect', 'main']);
    } finally {
      await rx.close();
    }
  });

  it('keeps the error code of a refused write and exits 1', async () => {
    const file = path.join(dir, 'bad.ndjson');
    await writeFile(file, '{"table":"Person","values":{"id":"x","name":"X","age":200}}\n');
    const r = await cli(['load', 'main', file]);
    expect(r.code).toBe(EXIT.failed);
    expect(r.stderr).toMatch(/^error \[constraint_violation\]/);
  });
});
