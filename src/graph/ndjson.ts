/**
 * NDJSON bulk loads: one operation per line,
 *   {"table":"Person","values":{"id":"a","name":"Ann"}}
 *   {"op":"delete","table":"Person","values":{"id":"b"}}
 * `op` defaults to upsert. Blank lines are skipped. Every problem is reported
 * with its line number and nothing is applied unless every line parses.
 */
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import type { WriteOp } from './write-batch.js';

export const MAX_LOAD_ROWS = 1_000_000;
const OPS = new Set(['insert', 'update', 'upsert', 'delete']);

export function parseNdjson(text: string): WriteOp[] {
  const ops: WriteOp[] = [];
  const issues: ErrorIssue[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    const at = `line ${i + 1}`;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      issues.push({ path: at, message: `not valid JSON: ${(e as Error).message}` });
      continue;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      issues.push({ path: at, message: 'each line must be an object {"table", "values", "op"?}' });
      continue;
    }
    const o = v as Record<string, unknown>;
    const op = o.op ?? 'upsert';
    if (typeof op !== 'string' || !OPS.has(op)) issues.push({ path: `${at}.op`, message: 'op must be insert, update, upsert or delete' });
    else if (typeof o.table !== 'string') issues.push({ path: `${at}.table`, message: 'table must be a string' });
    else if (o.values === null || typeof o.values !== 'object' || Array.isArray(o.values)) issues.push({ path: `${at}.values`, message: 'values must be an object' });
    else ops.push({ op: op as WriteOp['op'], table: o.table, values: o.values as Record<string, unknown> });
    if (ops.length > MAX_LOAD_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_LOAD_ROWS} rows`);
    if (issues.length >= 100) break;
  }
  if (issues.length > 0) throw new BranchgraphError('invalid_input', `bad NDJSON at ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
  return ops;
}
