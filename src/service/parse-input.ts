/**
 * Checking a value against an input contract, the one way every transport
 * does it: first the walk every request value takes (depth, text no storage
 * can carry), then the zod contract, with each problem named by its path
 * under `where` (`body.ops[3].values`, `query.limit`), so a bad input gets
 * the same `invalid_input` whichever way it came in.
 */
import type { z } from 'zod';
import { BranchgraphError } from '../model/errors.js';
import { findInputProblem } from '../model/text.js';

/**
 * For a value no branch of a union took (a ref given as text or as an object), the sentence the
 * branch that looked at it gave (a custom check's), rather than zod's "Invalid input".
 */
function unionMessage(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code !== 'invalid_union') return undefined;
  for (const branch of issue.errors) for (const i of branch) if (i.code === 'custom') return i.message;
  return undefined;
}

/** `value` as `schema` takes it, or `invalid_input` naming every problem under `where`. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const bad = findInputProblem(value, where);
  if (bad !== undefined) throw new BranchgraphError('invalid_input', `invalid ${where}: ${bad.path}: ${bad.message}`, { issues: [bad] });
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({
    path: where + i.path.map((seg) => (typeof seg === 'number' ? `[${seg}]` : `.${String(seg)}`)).join(''),
    message: unionMessage(i) ?? i.message,
  }));
  throw new BranchgraphError('invalid_input', `invalid ${where}: ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
}
