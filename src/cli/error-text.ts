/**
 * How the command line tells an error: one line with the stable code and up to 20 issues for a
 * person, or with `--json` the envelope REST, GraphQL and MCP answer, on one line.
 */
import type { BranchgraphError } from '../model/errors.js';

const SHOWN_ISSUES = 20;

export function errorText(err: BranchgraphError, json: boolean): string {
  const issues = err.issues.slice(0, SHOWN_ISSUES);
  if (json) {
    const error = { code: err.code, message: err.message, ...(issues.length > 0 ? { issues } : {}) };
    return `${JSON.stringify({ error })}\n`;
  }
  return [`error [${err.code}]: ${err.message}\n`, ...issues.map((i) => `  ${i.path}: ${i.message}\n`)].join('');
}
