/**
 * What a token may touch, beyond its role: the graphs it reaches and the
 * branches it reads and writes, each a list of name patterns, and how many
 * live branches it may own at once.
 *
 * A pattern is a name in which `*` stands for any run of characters (`/`
 * included: `agent/alice/*` covers `agent/alice/a/b`) and `?` for one. A
 * list left out restricts nothing; an empty list allows nothing. Writing a
 * branch implies reading it: a merge into a branch reads it, so a token's
 * readable branches are its read patterns and its write patterns together.
 *
 * Pure: the checks every transport applies (service/access.ts) are decided
 * here from names alone.
 */

export interface TokenScope {
  /** Graph names the token reaches (the default graph is `default`); every graph when absent. */
  graphs?: readonly string[];
  /** Branches it reads; every branch when absent. */
  read?: readonly string[];
  /** Branches it creates, changes, merges into and deletes; every branch when absent. */
  write?: readonly string[];
  /** The most live branches it may own at once. */
  maxBranches?: number;
}

/** The name the default graph (the store's root) goes by in a token's `graphs`. */
export const DEFAULT_GRAPH = 'default';

const compiled = new Map<string, RegExp>();

/** Does `name` match the pattern `glob` (`*` any run, `?` one character, all else literal)? */
export function globMatches(glob: string, name: string): boolean {
  let re = compiled.get(glob);
  if (re === undefined) {
    const body = [...glob].map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
    re = new RegExp(`^${body}$`, 's');
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(glob, re);
  }
  return re.test(name);
}

const anyMatches = (globs: readonly string[], name: string): boolean => globs.some((g) => globMatches(g, name));

/** May a token of this scope read the branch `name`? */
export function mayRead(scope: TokenScope | undefined, name: string): boolean {
  if (scope?.read === undefined) return true;
  return anyMatches(scope.read, name) || (scope.write !== undefined && anyMatches(scope.write, name));
}

/** May it create, change, merge into or delete the branch `name`? */
export function mayWrite(scope: TokenScope | undefined, name: string): boolean {
  return scope?.write === undefined || anyMatches(scope.write, name);
}

/** May it reach the graph `name`? */
export function mayReachGraph(scope: TokenScope | undefined, name: string): boolean {
  return scope?.graphs === undefined || anyMatches(scope.graphs, name);
}

/** Does it read every branch (so what reaches across branches, such as tags and webhooks, is open to it)? */
export function readsEverything(scope: TokenScope | undefined): boolean {
  return scope?.read === undefined;
}

/** Does it write every branch (so graph-wide changes, such as tags and webhooks, are open to it)? */
export function writesEverything(scope: TokenScope | undefined): boolean {
  return scope?.write === undefined;
}

/** The scope as words for an error: `read: agent/*; write: agent/alice/*`. */
export function scopeWords(scope: TokenScope): string[] {
  return [
    ...(scope.graphs !== undefined ? [`graphs: ${scope.graphs.join(', ') || '(none)'}`] : []),
    ...(scope.read !== undefined ? [`read: ${scope.read.join(', ') || '(none)'}`] : []),
    ...(scope.write !== undefined ? [`write: ${scope.write.join(', ') || '(none)'}`] : []),
    ...(scope.maxBranches !== undefined ? [`at most ${scope.maxBranches} branches`] : []),
  ];
}
