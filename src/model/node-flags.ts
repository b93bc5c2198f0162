/**
 * The Node and V8 flags this process was started with, on its command line
 * or in NODE_OPTIONS, and whether one of them is a given flag. V8 spells a
 * flag's words with dashes or underscores alike.
 */

/** Flags given to this process. */
export function givenNodeFlags(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((f) => f !== '')];
}

/** Was `flag` (`--name`, any value) among `given`? */
export function hasNodeFlag(flag: string, given: readonly string[] = givenNodeFlags()): boolean {
  const name = (flag.split('=')[0] as string).replace(/_/g, '-');
  return given.some((g) => (g.split('=')[0] as string).replace(/_/g, '-') === name);
}
