/**
 * Reading what a command line names: files (UTF-8 only, a missing one a
 * usage error naming it), whole numbers, JSON filters and conflict choices.
 * Every mistake is `invalid_input`, as on every transport.
 */
import { readFileSync, statSync } from 'node:fs';
import { BranchgraphError } from '../model/errors.js';
import type { Filter } from '../service/api.js';

/** A file the command reads; a missing or unreadable one is a usage error that names it. */
export function inputFile(file: string): string {
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    return file;
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    throw new BranchgraphError('invalid_input', `cannot read ${file}: ${why}`);
  }
}

export function readInput(file: string): string {
  // Text that is not UTF-8 is refused, never read with replacement characters in place of what it held.
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(inputFile(file)));
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    throw new BranchgraphError('invalid_input', `${file} is not valid UTF-8`, { issues: [{ path: file, message: 'not valid UTF-8' }] });
  }
}

export function intOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v))
    throw new BranchgraphError('invalid_input', `${name} must be a whole number, not ${JSON.stringify(v)}`, {
      issues: [{ path: name, message: 'a whole number' }],
    });
  return Number(v);
}

export function whereOption(v: string | undefined): Filter | undefined {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as Filter;
  } catch {
    throw new BranchgraphError('invalid_input', `--where must be a JSON object such as '{"name":"Ada"}', not ${v}`, {
      issues: [{ path: '--where', message: 'JSON object' }],
    });
  }
}

/** JSON text from a flag or a file, for the generic `call` command. */
export function jsonOption(name: string, v: string): unknown {
  try {
    return JSON.parse(v) as unknown;
  } catch (e) {
    throw new BranchgraphError('invalid_input', `${name} is not JSON: ${(e as Error).message}`, {
      issues: [{ path: name, message: 'JSON' }],
    });
  }
}

/** A request's resolutions from the --strategy and --resolutions flags; undefined when neither was given. */
export function resolutionsOf(strategy: string | undefined, file: string | undefined): Record<string, unknown> | undefined {
  const conflicts = file === undefined ? undefined : resolutionsFile(file);
  if (strategy === undefined && conflicts === undefined) return undefined;
  return { ...(strategy ? { strategy } : {}), ...(conflicts ? { conflicts } : {}) };
}

/** Conflict choices from a JSON file: an array of choices, or `{ "conflicts": [...] }` as a preview's report gives them. */
function resolutionsFile(file: string): unknown {
  const parsed = jsonOption(file, readInput(file));
  return Array.isArray(parsed) ? parsed : (parsed as { conflicts?: unknown } | null)?.conflicts;
}

/** The fields that are set, so an absent flag is an absent input field. */
export function defined<T extends Record<string, unknown>>(fields: T): Defined<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Defined<T>;
}

/** `T` with the fields that may be undefined made optional instead. */
type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};
