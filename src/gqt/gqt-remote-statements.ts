/**
 * The GQT statements for remotes: `remote add NAME` (a remote at a new,
 * empty directory), `fetch NAME [prune] [-> N moved]`,
 * `push NAME BRANCH[:DEST] [lease @label|BRANCH|none] -> created|fast_forward|forced|up_to_date`
 * and `clone NAME as COPY` (the remote cloned into a new directory, added
 * as the remote COPY). Any of them may end `-> error CODE`. A pull is a
 * fetch and a merge of `remote:NAME/BRANCH`.
 */
import { PUSH_OUTCOMES } from './gqt-case.js';
import { NAME, type GqtCursor, type Statement } from './gqt-cursor.js';

const REMOTE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function remote(c: GqtCursor, s: Statement): void {
  const [, action, name, ...rest] = s.words;
  const error = c.errorCode(s.line, s.tail);
  if (action !== 'add' || name === undefined || !REMOTE.test(name) || rest.length > 0) c.fail(s.line, 'expected "remote add NAME"');
  else c.steps.push({ kind: 'remote-add', line: s.line.n, name, ...(error ? { error } : {}) });
  c.i++;
}

export function fetchStatement(c: GqtCursor, s: Statement): void {
  const [, name, ...rest] = s.words;
  const moved = s.tail === undefined ? undefined : /^(\d+) moved$/.exec(s.tail)?.[1];
  const error = s.tail === undefined || moved !== undefined ? undefined : c.errorCode(s.line, s.tail);
  const prune = rest[0] === 'prune';
  if (name === undefined || !REMOTE.test(name) || rest.length > (prune ? 1 : 0))
    c.fail(s.line, 'expected "fetch NAME [prune] [-> N moved]"');
  else
    c.steps.push({
      kind: 'fetch',
      line: s.line.n,
      remote: name,
      prune,
      ...(moved !== undefined ? { moved: Number(moved) } : {}),
      ...(error ? { error } : {}),
    });
  c.i++;
}

const PUSH = `expected "push NAME BRANCH[:DEST] [lease @label|BRANCH|none] -> ${PUSH_OUTCOMES.join('|')}|error CODE"`;

export function push(c: GqtCursor, s: Statement): void {
  const [, name, spec, ...rest] = s.words;
  const outcome = PUSH_OUTCOMES.find((o) => o === s.tail);
  const error = outcome === undefined && s.tail !== undefined ? c.errorCode(s.line, s.tail) : undefined;
  const [branch, destination] = (spec ?? '').split(':');
  const leaseWord = rest[0] === 'lease' ? rest[1] : undefined;
  const lease = leaseWord === 'none' ? ('none' as const) : c.ref(s.line, leaseWord, c.colOf(s.line, leaseWord ?? ''));
  const ok =
    name !== undefined &&
    REMOTE.test(name) &&
    branch !== undefined &&
    NAME.test(branch) &&
    (destination === undefined || NAME.test(destination)) &&
    (rest.length === 0 || (rest.length === 2 && lease !== undefined)) &&
    (outcome !== undefined || error !== undefined);
  if (!ok) c.fail(s.line, PUSH);
  else
    c.steps.push({
      kind: 'push',
      line: s.line.n,
      remote: name,
      branch,
      ...(destination !== undefined ? { destination } : {}),
      ...(lease !== undefined ? { lease } : {}),
      ...(outcome !== undefined ? { expect: outcome } : {}),
      ...(error ? { error } : {}),
    });
  c.i++;
}

export function clone(c: GqtCursor, s: Statement): void {
  const [, name, as, copy, ...rest] = s.words;
  const error = c.errorCode(s.line, s.tail);
  if (name === undefined || !REMOTE.test(name) || as !== 'as' || copy === undefined || !REMOTE.test(copy) || rest.length > 0)
    c.fail(s.line, 'expected "clone NAME as COPY"');
  else c.steps.push({ kind: 'clone', line: s.line.n, remote: name, as: copy, ...(error ? { error } : {}) });
  c.i++;
}
