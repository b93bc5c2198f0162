/**
 * The line reader every GQT statement parser shares: the file split into
 * lines (a file or a line over its limit refused before any line is
 * parsed: regexes and JSON on a huge line would cost more), the position,
 * blocks up to `end`, the errors found so far (each at line and column),
 * and the small readers of JSON objects, refs, `-> ...` tails and error
 * codes. Parsing never stops at the first error: every one is reported.
 */
import { ERROR_CODES, type ErrorCode } from '../model/errors.js';
import type { ConflictResolution } from '../service/inputs.js';
import { GqtSyntaxError, MAX_GQT_CHARS, MAX_GQT_LINE_CHARS, type CaseRef, type GqtParseError, type Step } from './gqt-case.js';

export interface Line {
  n: number;
  text: string;
  indent: number;
}

/** A statement's line, split: the words before any `->`, and what follows it. */
export interface Statement {
  line: Line;
  head: string;
  tail: string | undefined;
  words: string[];
}

/** Parses one statement from the cursor (its line, and the block it opens), pushing its steps. */
export type StatementParser = (c: GqtCursor, s: Statement) => void;

/** A branch, tag or case name. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._\-/]*$/;

export class GqtCursor {
  readonly lines: Line[];
  readonly errors: GqtParseError[] = [];
  readonly steps: Step[] = [];
  /** Choices from a `resolve` block, waiting for the merge step that follows it. */
  resolveBlock: { line: Line; conflicts: ConflictResolution[] } | undefined;
  i = 0;

  constructor(
    source: string,
    readonly file: string,
  ) {
    if (source.length > MAX_GQT_CHARS) this.refuse(1, `the file is ${source.length} characters; GQT files are limited to ${MAX_GQT_CHARS}`);
    this.lines = source.split('\n').map((raw, i) => {
      const text = raw.replace(/\r$/, '');
      return { n: i + 1, text: text.trim(), indent: text.length - text.trimStart().length };
    });
    const long = this.lines.find((l) => l.text.length > MAX_GQT_LINE_CHARS);
    if (long !== undefined)
      this.refuse(long.n, `the line is ${long.text.length} characters; GQT lines are limited to ${MAX_GQT_LINE_CHARS}`);
  }

  private refuse(line: number, message: string): never {
    throw new GqtSyntaxError([{ file: this.file, line, column: 1, message }]);
  }

  fail(line: Line | number, message: string, column?: number): void {
    const l = typeof line === 'number' ? line : line.n;
    const col = column ?? (typeof line === 'number' ? 1 : line.indent + 1);
    this.errors.push({ file: this.file, line: l, column: col, message });
  }

  /** The next line with content (blank lines and comments skipped), left unconsumed. */
  content(): Line | undefined {
    while (this.i < this.lines.length) {
      const l = this.lines[this.i] as Line;
      if (l.text === '' || l.text.startsWith('#')) this.i++;
      else return l;
    }
    return undefined;
  }

  /** Lines of the block `opener` opens, up to `end`; comments and blank lines dropped unless kept. */
  block(opener: Line, opts: { keepBlank?: boolean } = {}): Line[] {
    const keepBlank = opts.keepBlank === true;
    const out: Line[] = [];
    this.i++;
    while (this.i < this.lines.length) {
      const l = this.lines[this.i] as Line;
      this.i++;
      if (l.text === 'end') return out;
      if (!keepBlank && (l.text === '' || l.text.startsWith('#'))) continue;
      out.push(l);
    }
    this.fail(opener, `block opened here has no closing "end"`);
    return out;
  }

  /** Each line of a block as a JSON object (those that are not, reported). */
  objects(opener: Line): Record<string, unknown>[] {
    return this.block(opener)
      .map((b) => this.json(b, b.text, b.indent + 1))
      .filter((r): r is Record<string, unknown> => r !== undefined);
  }

  json(l: Line, text: string, column: number): Record<string, unknown> | undefined {
    try {
      const v = JSON.parse(text) as unknown;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        this.fail(l, 'expected a JSON object', column);
        return undefined;
      }
      return v as Record<string, unknown>;
    } catch (e) {
      this.fail(l, `invalid JSON: ${(e as Error).message}`, column);
      return undefined;
    }
  }

  /** Split a trailing `-> error CODE` (or any `-> ...`) off a step line. */
  arrow(l: Line): { head: string; tail: string | undefined } {
    const at = l.text.indexOf(' -> ');
    return at < 0 ? { head: l.text, tail: undefined } : { head: l.text.slice(0, at).trim(), tail: l.text.slice(at + 4).trim() };
  }

  errorCode(l: Line, tail: string | undefined): ErrorCode | undefined {
    if (tail === undefined) return undefined;
    const m = /^error\s+(\w+)$/.exec(tail);
    if (m === null || !((m[1] as string) in ERROR_CODES)) {
      this.fail(l, `expected "-> error CODE" with a known code, found "-> ${tail}"`, l.text.indexOf('->') + l.indent + 1);
      return undefined;
    }
    return m[1] as ErrorCode;
  }

  ref(l: Line, whole: string | undefined, column: number): CaseRef | undefined {
    if (whole === undefined) return undefined;
    // Steps back through history, in the ref grammar's spelling: ~N first parents, ^N a merge's parents.
    const m = /^(.*?)((?:[~^]\d{0,4})*)$/.exec(whole) as RegExpExecArray;
    const word = m[1] as string;
    const steps = m[2] === '' ? {} : { steps: m[2] as string };
    const ref = this.baseRef(l, word, column);
    return ref === undefined ? undefined : { ...ref, ...steps };
  }

  private baseRef(l: Line, word: string, column: number): CaseRef | undefined {
    if (word.startsWith('@')) return { label: word.slice(1) };
    if (word.startsWith('tag:') && NAME.test(word.slice(4))) return { tag: word.slice(4) };
    if (/^remote:[A-Za-z0-9][A-Za-z0-9._-]*\//.test(word) && NAME.test(word.slice(7))) return { remote: word.slice(7) };
    if (!NAME.test(word)) {
      this.fail(l, `expected a branch name, @label, tag:NAME or remote:REMOTE/BRANCH, found "${word}"`, column);
      return undefined;
    }
    return { branch: word };
  }

  colOf(l: Line, word: string): number {
    return l.indent + l.text.indexOf(word) + 1;
  }
}
