/**
 * The GQT case-file parser: pure, line-oriented, and strict. Either every
 * step of a file parses, or the file is rejected with every error found, each
 * at `file:line:column`; a malformed file never runs a step.
 *
 * See docs/gqt.md for the format. In short: a case is `case NAME`, optional
 * `description:` lines, then steps. Blocks open on a step line and close
 * with `end`. A step may end with `-> error CODE` to expect that error.
 *
 * Each statement has its parser in a table (gqt-statements.ts), keyed by
 * its first word, over one line reader (gqt-cursor.ts); this file holds the
 * case's types and the loop that runs the table, then checks labels.
 */
import { GqtSyntaxError, type GqtCase } from './gqt-case.js';
import { GqtCursor } from './gqt-cursor.js';
import { STATEMENTS, STATEMENT_NAMES } from './gqt-statements.js';

export * from './gqt-case.js';

export function parseGqt(source: string, file: string): GqtCase {
  const c = new GqtCursor(source, file);
  const first = c.content();
  let name = '';
  if (first === undefined || !first.text.startsWith('case ')) {
    c.fail(first ?? c.lines.length, 'a GQT file starts with "case NAME"');
  } else {
    name = first.text.slice(5).trim();
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) c.fail(first, 'case names use letters, digits, ".", "_" and "-"', 6 + first.indent);
    c.i++;
  }
  const description: string[] = [];
  for (let l = c.content(); l !== undefined; l = c.content()) {
    if (l.text.startsWith('description:')) {
      description.push(l.text.slice('description:'.length).trim());
      c.i++;
      continue;
    }
    const { head, tail } = c.arrow(l);
    const words = head.split(/\s+/);
    // Own keys only: a step named like an Object method (`valueOf`) is an unknown step, not a parser.
    const word = words[0] ?? '';
    const parse = Object.hasOwn(STATEMENTS, word) ? STATEMENTS[word] : undefined;
    if (parse !== undefined) parse(c, { line: l, head, tail, words });
    else {
      c.fail(l, `unknown step "${words[0] ?? ''}"; expected ${STATEMENT_NAMES}`);
      c.i++;
    }
  }
  if (c.resolveBlock !== undefined) c.fail(c.resolveBlock.line, 'a resolve block must be followed by the merge it is for');
  checkLabels(c);
  if (c.steps.length === 0 && c.errors.length === 0) c.fail(c.lines.length, 'a case needs at least one step');
  if (c.errors.length > 0) throw new GqtSyntaxError(c.errors.sort((a, b) => a.line - b.line || a.column - b.column));
  return { file, name, description: description.join(' '), steps: c.steps };
}

/** Labels must be defined before use. */
function checkLabels(c: GqtCursor): void {
  const defined = new Set<string>();
  for (const s of c.steps) {
    const uses: string[] = [];
    if (s.kind === 'label') defined.add(s.name);
    if (s.kind === 'merge')
      uses.push(
        ...[s.expectSourceHead, s.expectTargetHead, s.apply !== undefined ? s.source : undefined].filter(
          (x): x is string => x !== undefined,
        ),
      );
    const refs =
      s.kind === 'expect-table' || s.kind === 'expect-search'
        ? [s.at]
        : s.kind === 'branch-create' || s.kind === 'tag-create'
          ? [s.from]
          : s.kind === 'expect-diff'
            ? [s.from, s.to]
            : s.kind === 'push' && s.lease !== undefined && s.lease !== 'none'
              ? [s.lease]
              : [];
    for (const r of refs) if ('label' in r) uses.push(r.label);
    if (s.kind === 'expect-head') uses.push(s.label);
    for (const u of uses) if (!defined.has(u)) c.fail(s.line, `label @${u} is used before "label ${u} = head ..." defines it`);
  }
}
