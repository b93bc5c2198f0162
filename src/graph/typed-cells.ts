/**
 * Typed columns for imports: a CSV header or a Parquet file's columns mapped
 * to a table's properties, and a CSV cell's text read as its property's
 * type. Reading is lenient in spelling and strict in meaning: `42` becomes
 * the number 42 for an int, `t`/`true`/`1` true for a bool, a json or vector
 * cell is JSON text. Text that does not read as the type is kept as text, so
 * the row check names it with the message every transport gives ("v must be
 * an integer"), by the line it came from.
 */
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { rowProps, type PropDef, type TableType } from '../model/schema.js';

/** Each column's property, by the header's names; a name the table does not have, or a name given twice, is refused. */
export function columnsOf(type: TableType, header: readonly (string | null)[], where: string): PropDef[] {
  const props = new Map(rowProps(type).map((p) => [p.name, p]));
  const issues: ErrorIssue[] = [];
  const seen = new Set<string>();
  const out: PropDef[] = [];
  for (const [i, raw] of header.entries()) {
    const name = (raw ?? '').trim();
    const prop = props.get(name);
    if (prop === undefined) issues.push({ path: `${where}, column ${i + 1}`, message: `${type.name} has no property "${name}"` });
    else if (seen.has(name)) issues.push({ path: `${where}, column ${i + 1}`, message: `"${name}" is named twice` });
    else out.push(prop);
    seen.add(name);
  }
  if (issues.length > 0)
    throw new BranchgraphError('invalid_input', `bad columns at ${issues[0]?.path}: ${issues[0]?.message}`, {
      issues: issues.slice(0, 100),
    });
  return out;
}

const INT = /^[+-]?\d+$/;
const TRUE = new Set(['true', 't', '1', 'TRUE', 'True', 'T']);
const FALSE = new Set(['false', 'f', '0', 'FALSE', 'False', 'F']);

/** A cell's text as `prop`'s value: a number, a boolean or parsed JSON where the type says so, the text otherwise. */
export function cellValue(prop: PropDef, text: string): unknown {
  switch (prop.type.kind) {
    case 'int':
      return INT.test(text) ? Number(text) : text;
    case 'float': {
      const n = text.trim() === '' ? Number.NaN : Number(text);
      return Number.isNaN(n) ? text : n;
    }
    case 'bool':
      return TRUE.has(text) ? true : FALSE.has(text) ? false : text;
    case 'json':
    case 'vector':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new BranchgraphError('invalid_input', `${prop.name} must be JSON text`, {
          issues: [{ path: prop.name, message: 'not valid JSON' }],
        });
      }
    default:
      return text;
  }
}
