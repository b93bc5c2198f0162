/**
 * The ref grammar: how every transport (REST `at`, GraphQL `at`, the
 * command line, diffs, cherry-picks and reverts) names a commit. One parser,
 * one printer, no I/O; graph/snapshot-reader.ts resolves what they produce.
 *
 *   ref   := base [ "@{" time "}" ] step*
 *   base  := "commit:" id | "commit:" prefix | "tag:" name | "remote:" remote "/" name | name
 *   step  := "~" [n]       n first parents back (default 1; ~0 is the commit itself)
 *          | "^" [n]       the n-th parent (default 1; ^0 is the commit itself; ^2 of a merge is its source)
 *
 * - A bare `name` is a branch. When no branch has that name and it could be
 *   the start of a commit id (at least 8 of the id alphabet), it is read as
 *   a commit-id prefix, as Git reads refs before object names.
 * - `id` is a whole commit id (26 characters); `prefix` 8 to 25 of its
 *   first characters, which must name exactly one commit.
 * - `@{time}` (RFC 3339, with `Z` or an offset) applies to a branch only: the
 *   commit that was the branch's head at that time, by the branch's own
 *   history of heads, not by commit timestamps. It comes before the steps:
 *   `main@{2026-12-01T12:00:00Z}~2`.
 * - `remote:origin/main` is a remote-tracking ref: the head `main` had on
 *   the remote `origin` when it was last fetched (graph/remotes.ts). The
 *   remote's name is one segment; the branch name is the rest.
 * - Branch and tag names cannot hold `~`, `^`, `@` or `{`, so a base ends at
 *   the first of them.
 */

/** The shortest commit-id prefix a ref may use. */
export const MIN_COMMIT_PREFIX = 8;

/** The characters of a commit id (Crockford base 32, as ULIDs use). */
const ID_CHARS = '[0-9A-HJKMNP-TV-Z]';
const ID_RE = new RegExp(`^${ID_CHARS}{26}$`);
const PREFIX_RE = new RegExp(`^${ID_CHARS}{${MIN_COMMIT_PREFIX},25}$`);
const TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
/** The most generations one step may go back, and one ref in all: each is a manifest read. */
export const MAX_REF_GENERATIONS = 10_000;
/** The most steps one ref may chain. */
export const MAX_REF_STEPS = 64;

export type RefBase =
  | { branch: string }
  | { commit: string }
  | { commitPrefix: string }
  | { tag: string }
  /** A remote-tracking ref: `remote:<remote>/<remoteBranch>`. */
  | { remote: string; remoteBranch: string };

/** `~n` (`ancestor`: n first parents back) or `^n` (`parent`: the n-th parent). */
export interface RefStep {
  kind: 'ancestor' | 'parent';
  n: number;
}

/** A parsed ref: where it starts, the time it is read at (branches), and the steps from there. */
export interface RefPath {
  base: RefBase;
  /** The instant, normalized to UTC with milliseconds (`2026-12-01T12:00:00.000Z`). */
  asOf?: string;
  steps: RefStep[];
}

/** `text` parsed, or what is wrong with it (a sentence a client can act on). */
/** Milliseconds since the epoch of an RFC 3339 time (`Z` or an offset), or undefined. */
export function parseTime(text: string): number | undefined {
  const ms = TIME_RE.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

export function parseRefText(text: string): RefPath | { error: string } {
  const cut = firstOf(text, ['~', '^', '@{']);
  const baseText = text.slice(0, cut);
  const base = parseBase(baseText);
  if ('error' in base) return base;
  let rest = text.slice(cut);
  const path: RefPath = { base, steps: [] };
  if (rest.startsWith('@{')) {
    const end = rest.indexOf('}');
    if (end < 0) return { error: `unclosed @{ in ${JSON.stringify(text)}` };
    const time = rest.slice(2, end);
    const ms = parseTime(time);
    if (ms === undefined) return { error: `@{${time}}: use an RFC 3339 time such as 2026-12-01T12:00:00Z` };
    if (!('branch' in base))
      return { error: '@{time} reads a branch as it was: it follows a branch name, not a commit, tag or remote ref' };
    path.asOf = new Date(ms).toISOString();
    rest = rest.slice(end + 1);
  }
  let generations = 0;
  while (rest.length > 0) {
    const m = /^([~^])(\d*)/.exec(rest);
    if (m === null) return { error: `unexpected ${JSON.stringify(rest)} in ${JSON.stringify(text)}: steps are ~N and ^N` };
    const digits = m[2] ?? '';
    if (digits.length > 6) return { error: `${m[0]}: at most ${MAX_REF_GENERATIONS} generations` };
    const n = digits === '' ? 1 : Number(digits);
    generations += n;
    if (generations > MAX_REF_GENERATIONS) return { error: `a ref goes back at most ${MAX_REF_GENERATIONS} generations` };
    path.steps.push({ kind: m[1] === '~' ? 'ancestor' : 'parent', n });
    if (path.steps.length > MAX_REF_STEPS) return { error: `a ref chains at most ${MAX_REF_STEPS} steps` };
    rest = rest.slice(m[0].length);
  }
  return path;
}

/** The text that parses back to `path` (times as normalized). */
export function refPathText(path: RefPath): string {
  const b = path.base;
  const base =
    'commit' in b
      ? `commit:${b.commit}`
      : 'commitPrefix' in b
        ? `commit:${b.commitPrefix}`
        : 'tag' in b
          ? `tag:${b.tag}`
          : 'remote' in b
            ? `remote:${b.remote}/${b.remoteBranch}`
            : b.branch;
  const asOf = path.asOf === undefined ? '' : `@{${path.asOf}}`;
  return base + asOf + path.steps.map((s) => `${s.kind === 'ancestor' ? '~' : '^'}${s.n}`).join('');
}

/** Whether a branch name could also be read as a commit-id prefix. */
export function couldBeCommitPrefix(name: string): boolean {
  return PREFIX_RE.test(name) || ID_RE.test(name);
}

function parseBase(text: string): RefBase | { error: string } {
  if (text.startsWith('commit:')) {
    const id = text.slice('commit:'.length);
    if (ID_RE.test(id)) return { commit: id };
    if (PREFIX_RE.test(id)) return { commitPrefix: id };
    return { error: `commit:${id}: a 26-character commit id, or at least its first ${MIN_COMMIT_PREFIX}` };
  }
  if (text.startsWith('tag:')) {
    const tag = text.slice('tag:'.length);
    return tag === '' ? { error: 'tag: needs a tag name' } : { tag };
  }
  if (text.startsWith('remote:')) {
    const rest = text.slice('remote:'.length);
    const slash = rest.indexOf('/');
    if (slash <= 0 || slash === rest.length - 1) return { error: `${text}: a remote-tracking ref is remote:<remote>/<branch>` };
    return { remote: rest.slice(0, slash), remoteBranch: rest.slice(slash + 1) };
  }
  return text === '' ? { error: 'a ref starts with a branch name, commit:<id>, tag:<name> or remote:<remote>/<branch>' } : { branch: text };
}

function firstOf(text: string, marks: string[]): number {
  let at = text.length;
  for (const m of marks) {
    const i = text.indexOf(m);
    if (i >= 0 && i < at) at = i;
  }
  return at;
}
