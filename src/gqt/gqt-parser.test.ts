import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GqtSyntaxError, MAX_GQT_LINE_CHARS, parseGqt } from './gqt-parser.js';

function errorsOf(text: string): string[] {
  try {
    parseGqt(text, 'x.gqt');
  } catch (e) {
    if (e instanceof GqtSyntaxError) return e.errors.map((x) => `${x.line}:${x.column} ${x.message}`);
    throw e;
  }
  throw new Error('expected a syntax error');
}

describe('GQT parser', () => {
  it('parses every kind of step', () => {
    const c = parseGqt(
      `# header comment
case demo
description: one
description: two

schema
  node P { id: string @key }
end
seed P
  {"id": "a"}
end
branch create f
label l = head main
branch create g from @l
write f -> error constraint_violation
  insert P {"id": "a"}
  delete P {"id": "b"}
end
merge f into main dry-run width 4 delete-branch expect-source-head @l message "hi there" -> merged branch-kept
merge f into main -> conflicts
  DivergentUpdate P a v
  DeleteVsUpdate P b
end
merge f into main -> error head_moved
restart
expect table P at @l
  {"id": "a"}
end
expect log main
  merge land it
  write
end
expect head main is-not @l
branch delete f -> error not_found
`,
      'demo.gqt',
    );
    expect(c.name).toBe('demo');
    expect(c.description).toBe('one two');
    expect(c.steps.map((s) => s.kind)).toEqual([
      'schema',
      'seed',
      'branch-create',
      'label',
      'branch-create',
      'write',
      'merge',
      'merge',
      'merge',
      'restart',
      'expect-table',
      'expect-log',
      'expect-head',
      'branch-delete',
    ]);
    expect(c.steps[6]).toMatchObject({
      dryRun: true,
      width: 4,
      deleteBranch: true,
      expectSourceHead: 'l',
      message: 'hi there',
      expect: { kind: 'outcome', outcome: 'merged' },
      expectBranchDeleted: false,
    });
    expect(c.steps[7]).toMatchObject({
      expect: {
        kind: 'conflicts',
        conflicts: [
          { kind: 'DivergentUpdate', table: 'P', key: 'a', property: 'v' },
          { kind: 'DeleteVsUpdate', table: 'P', key: 'b', property: null },
        ],
      },
    });
    expect(c.steps[5]).toMatchObject({ kind: 'write', error: 'constraint_violation', ops: [{ op: 'insert' }, { op: 'delete' }] });
    expect(c.steps[11]).toMatchObject({ entries: [{ kind: 'merge', message: 'land it' }, { kind: 'write' }] });
  });

  it('parses the history steps: filtered logs, entity history, blame and reset', () => {
    const c = parseGqt(
      `case hist
expect log main~1 table P key a kind merge,write author ann first-parent
  write set a
end
expect history P a at @one first-parent
  updated n,s set a
  inserted id,n
end
expect blame P a
  n write set a
end
reset f to main~2
reset f to @gone -> error not_found
`,
      'hist.gqt',
    );
    expect(c.steps.map(({ line: _line, ...s }) => s)).toEqual([
      {
        kind: 'expect-log',
        at: { branch: 'main', steps: '~1' },
        query: { table: 'P', key: 'a', kind: 'merge,write', author: 'ann', firstParent: true },
        entries: [{ kind: 'write', message: 'set a' }],
      },
      {
        kind: 'expect-history',
        table: 'P',
        key: 'a',
        at: { label: 'one' },
        firstParent: true,
        versions: [
          { change: 'updated', changed: ['n', 's'], message: 'set a' },
          { change: 'inserted', changed: ['id', 'n'] },
        ],
      },
      {
        kind: 'expect-blame',
        table: 'P',
        key: 'a',
        at: { branch: 'main' },
        properties: [{ property: 'n', kind: 'write', message: 'set a' }],
      },
      { kind: 'reset', branch: 'f', to: { branch: 'main', steps: '~2' } },
      { kind: 'reset', branch: 'f', to: { label: 'gone' }, error: 'not_found' },
    ]);
    expect(errorsOf('case x\nexpect log main key a\nend\nexpect history P\nend\nexpect log main colour red\nend\nreset f main\n')).toEqual([
      '2:17 a key filter needs "table T" too',
      '4:1 expected "expect history TABLE KEY [at REF] [first-parent]"',
      '6:17 expected "expect log REF [table T] [key K] [kind K,K] [author A] [first-parent]"',
      '8:1 expected "reset BRANCH to REF"',
    ]);
  });

  it('parses the protection and merge request steps', () => {
    const c = parseGqt(
      `case req
protect main approvals 2 allow-bypass stale-on head_move
unprotect main
request open r1 from f into dev
request review r1 approve -> error forbidden
request resolve r1 none
request merge r1 delete-branch -> merged
expect request r1
  state merged
  preview conflicts 2
  mergeable no
  reason the request is merged
end
`,
      'req.gqt',
    );
    expect(c.steps.map(({ line: _line, ...s }) => s)).toEqual([
      { kind: 'protect', branch: 'main', rule: { requiredApprovals: 2, allowAdminBypass: true, staleApprovals: 'head_move' } },
      { kind: 'protect', branch: 'main', rule: null },
      { kind: 'request', name: 'r1', action: 'open', source: 'f', target: 'dev' },
      { kind: 'request', name: 'r1', action: 'review', verdict: 'approve', error: 'forbidden' },
      { kind: 'request', name: 'r1', action: 'resolve', strategy: null },
      { kind: 'request', name: 'r1', action: 'merge', deleteBranch: true, expect: 'merged' },
      {
        kind: 'expect-request',
        name: 'r1',
        checks: { state: 'merged', preview: { outcome: 'conflicts', conflicts: 2 }, mergeable: false, reasons: ['the request is merged'] },
      },
    ]);
    expect(errorsOf('case x\nprotect main approvals many\nrequest merge r1\nexpect request r1\n  colour red\nend\n')).toEqual([
      '2:14 expected "protect BRANCH [approvals N] [allow-bypass] [stale-on result_change|head_move]"',
      '3:1 expected "request open NAME from BRANCH [into BRANCH]", "request revise|close NAME", "request review NAME approve|request_changes|comment", "request resolve NAME source-wins|target-wins|none" or "request merge NAME [delete-branch] -> merged|fast_forward|error CODE"',
      '5:3 expected "state S", "revisions N", "preview OUTCOME CONFLICTS", "mergeable yes|no" or "reason TEXT"',
    ]);
  });

  it('parses the WAL steps: ingest, catchup with options, expect pending', () => {
    const c = parseGqt(
      `case wal
ingest main
  upsert P {"id": "a"}
end
ingest main -> error constraint_violation
  insert P {"id": 1}
end
catchup main
catchup main max 8 serial
catchup f -> error not_found
expect pending main 0
`,
      'wal.gqt',
    );
    expect(c.steps.map(({ line: _line, ...s }) => s)).toEqual([
      { kind: 'ingest', branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'a' } }] },
      { kind: 'ingest', branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 1 } }], error: 'constraint_violation' },
      { kind: 'catchup', branch: 'main', serial: false },
      { kind: 'catchup', branch: 'main', serial: true, maxGenerations: 8 },
      { kind: 'catchup', branch: 'f', serial: false, error: 'not_found' },
      { kind: 'expect-pending', branch: 'main', generations: 0 },
    ]);
    expect(errorsOf('case x\ncatchup main max\nexpect pending main lots\ningest\n  upsert P {}\nend\n')).toEqual([
      '2:1 expected "catchup BRANCH [max N] [serial]"',
      '3:1 expected "expect table TABLE at REF", "expect log REF", "expect history TABLE KEY", "expect blame TABLE KEY", "expect search TABLE", "expect request NAME", "expect head BRANCH is|is-not @label", "expect pending BRANCH N" or "expect diff FROM TO|FROM...TO"',
      '4:8 expected "ingest BRANCH"',
    ]);
  });

  it('parses the remote steps: remote add, fetch, push with a destination and a lease, clone, and remote refs', () => {
    const c = parseGqt(
      `case remotes
remote add origin
fetch origin prune -> 2 moved
label x = head main
push origin main -> created
push origin topic:main lease @x -> forced
push origin topic lease none -> error head_moved
clone origin as copy
expect table P at remote:copy/main
end
`,
      'remotes.gqt',
    );
    expect(c.steps.map(({ line: _line, ...s }) => s)).toEqual([
      { kind: 'remote-add', name: 'origin' },
      { kind: 'fetch', remote: 'origin', prune: true, moved: 2 },
      { kind: 'label', name: 'x', branch: 'main' },
      { kind: 'push', remote: 'origin', branch: 'main', expect: 'created' },
      { kind: 'push', remote: 'origin', branch: 'topic', destination: 'main', lease: { label: 'x' }, expect: 'forced' },
      { kind: 'push', remote: 'origin', branch: 'topic', lease: 'none', error: 'head_moved' },
      { kind: 'clone', remote: 'origin', as: 'copy' },
      { kind: 'expect-table', table: 'P', at: { remote: 'copy/main' }, rows: [] },
    ]);
    expect(errorsOf('case x\nremote drop origin\npush origin main\nclone origin copy\nfetch\n')).toEqual([
      '2:1 expected "remote add NAME"',
      '3:1 expected "push NAME BRANCH[:DEST] [lease @label|BRANCH|none] -> created|fast_forward|forced|up_to_date|error CODE"',
      '4:1 expected "clone NAME as COPY"',
      '5:1 expected "fetch NAME [prune] [-> N moved]"',
    ]);
  });

  it('parses resolve blocks and strategies into the next merge, and reports their mistakes', () => {
    const c = parseGqt(
      `case r
resolve
  Person ann age value 33 expected {"base": 30, "source": 31, "target": 32}
  Person bob * base
  Knows ["a","b"] * value null
  Person cy * value {"id": "cy", "note": "expected {"}
end
merge f into main strategy source-wins -> merged
merge g into main -> merged
`,
      'r.gqt',
    );
    const merges = c.steps.filter((s) => s.kind === 'merge');
    expect(merges.map((m) => m.resolutions)).toEqual([
      {
        strategy: 'source-wins',
        conflicts: [
          { table: 'Person', key: 'ann', property: 'age', take: 'value', value: 33, expected: { base: 30, source: 31, target: 32 } },
          { table: 'Person', key: 'bob', property: null, take: 'base' },
          { table: 'Knows', key: '["a","b"]', property: null, take: 'value', value: null },
          { table: 'Person', key: 'cy', property: null, take: 'value', value: { id: 'cy', note: 'expected {' } },
        ],
      },
      undefined,
    ]);
    expect(
      errorsOf(
        'case x\nresolve\n  Person ann\n  Person ann age source 3\n  Person ann age value {nope\nend\nmerge f into main strategy sideways -> merged\nresolve\nend\n',
      ),
    ).toEqual([
      '3:3 expected "TABLE KEY PROPERTY|* source|target|base|value [JSON] [expected {JSON}]"',
      '4:25 source takes no value',
      expect.stringMatching(/^5:18 value takes a JSON value: /),
      '7:19 strategy is source-wins or target-wins',
      '8:1 a resolve block must be followed by the merge it is for',
    ]);
  });

  it('parses diffs, idempotency keys and replayed outcomes', () => {
    const c = parseGqt(
      'case d\nexpect diff main...f\n  + Doc a\n  - Doc ["x","y"]\nend\nlabel l = head main\nexpect diff @l f\nend\nmerge f into main idempotency-key "k-1" -> merged replayed\n',
      'd.gqt',
    );
    expect(c.steps.map(({ line: _line, ...s }) => s)).toEqual([
      {
        kind: 'expect-diff',
        from: { branch: 'main' },
        to: { branch: 'f' },
        threeDot: true,
        changes: [
          { change: '+', table: 'Doc', key: 'a' },
          { change: '-', table: 'Doc', key: '["x","y"]' },
        ],
      },
      { kind: 'label', name: 'l', branch: 'main' },
      { kind: 'expect-diff', from: { label: 'l' }, to: { branch: 'f' }, threeDot: false, changes: [] },
      expect.objectContaining({ kind: 'merge', idempotencyKey: 'k-1', expectReplayed: true }),
    ]);
  });

  it('regression: refuses a file or a line over its limit before parsing it (a 3 MB line or a 20 MB file is one quick error, not a long parse)', () => {
    expect(errorsOf(`case c\nwrite main\n  insert P {"id": "${'x'.repeat(3 * 1024 * 1024)}"}\nend\n`)).toEqual([
      `3:1 the line is ${3 * 1024 * 1024 + 19} characters; GQT lines are limited to ${MAX_GQT_LINE_CHARS}`,
    ]);
    expect(errorsOf(`case c\n${'# comment\n'.repeat(2_000_000)}`)[0]).toMatch(/^1:1 the file is \d+ characters; GQT files are limited to/);
  });

  it('reports every error with line and column, and returns no case', () => {
    expect(
      errorsOf(`case c
write main
  insert P {"id": }
  frob P {}
end
merge a into b -> sideways
merge a into b width 3 -> merged
branch create x from y z
expect table P at @nolabel
end
schema
  node P {}
`),
    ).toEqual([
      '3:12 invalid JSON: Unexpected token \'}\', "{"id": }" is not valid JSON',
      '4:3 expected "insert|update|upsert|delete TABLE {json}"',
      '6:16 unknown expectation "-> sideways"',
      '7:16 width is 1, 2 or 4',
      '8:1 expected "branch create NAME [from BRANCH|@label]" or "branch delete NAME"',
      '9:1 label @nolabel is used before "label nolabel = head ..." defines it',
      '11:1 block opened here has no closing "end"',
    ]);
    expect(errorsOf('write main\nend')).toEqual(['1:1 a GQT file starts with "case NAME"']);
    expect(errorsOf('case x\nfly away')).toEqual([
      '2:1 unknown step "fly"; expected schema, seed, write, ingest, catchup, branch, tag, resolve, merge, cherry-pick, revert, label, reset, protect, unprotect, request, restart, graphql, expect, remote, fetch, push or clone',
    ]);
    expect(errorsOf('case x\nmerge a into b')[0]).toContain('a merge needs an expectation');
  });

  it('never throws anything but a syntax error on arbitrary text', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.string(), fc.constantFrom('case x', 'end', 'merge a into b -> merged', 'write main', 'expect table T', 'schema')),
          { maxLength: 12 },
        ),
        (lines) => {
          try {
            parseGqt(lines.join('\n'), 'f.gqt');
          } catch (e) {
            expect(e).toBeInstanceOf(GqtSyntaxError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
