/**
 * CSV records as RFC 4180 writes them, read from text that arrives in
 * pieces: fields separated by commas, records by LF or CRLF, a field in
 * double quotes may hold commas, quotes (doubled) and line breaks.
 *
 * A field written as nothing (`a,,b`) is null and a quoted empty field
 * (`a,"",b`) is the empty string, as PostgreSQL's `COPY … CSV` reads them,
 * so a CSV file can say "no value" and "empty text" apart. Blank lines are
 * skipped. Each record carries the line it starts on, so every problem
 * names a line a user can open.
 *
 * Work is linear in the text: a record without quotes is split with one
 * `indexOf` and one `split`; only a quoted record is walked by character.
 * A record longer than the limit is refused by its line before the reader
 * looks for its end, so an unclosed quote cannot hold the whole input.
 */
import { BranchgraphError } from './errors.js';

export interface CsvRecord {
  /** The line the record starts on, counting from 1. */
  line: number;
  /** Its fields: null for a field written as nothing, text otherwise. */
  fields: (string | null)[];
}

export class CsvReader {
  #text = '';
  #at = 0;
  #line = 1;

  /** @param maxRecordChars the longest record, in characters (a record at the limit of a row, with its separators) */
  constructor(private readonly maxRecordChars: number) {}

  /** The records `text` completes; what it leaves open waits for the next piece. */
  push(text: string): CsvRecord[] {
    this.#text = this.#text.slice(this.#at) + text;
    this.#at = 0;
    return this.#records(false);
  }

  /** The records the input ended with: a last line without its line break, or an unclosed quote (refused). */
  finish(): CsvRecord[] {
    const out = this.#records(true);
    this.#text = '';
    this.#at = 0;
    return out;
  }

  #records(last: boolean): CsvRecord[] {
    const out: CsvRecord[] = [];
    const text = this.#text;
    // The next quote, searched again only once passed: text without quotes is scanned once, not once per record.
    let quote = -2;
    while (this.#at < text.length) {
      const nl = text.indexOf('\n', this.#at);
      const end = nl < 0 ? text.length : nl;
      if (quote !== -1 && quote < this.#at) quote = text.indexOf('"', this.#at);
      let record: { fields: (string | null)[]; next: number; lines: number } | undefined;
      if (quote < 0 || quote > end) {
        if (nl < 0 && !last) break;
        this.#limit(end - this.#at);
        const raw = text.charCodeAt(end - 1) === 13 && end > this.#at ? text.slice(this.#at, end - 1) : text.slice(this.#at, end);
        record = { fields: raw === '' ? [] : raw.split(',').map((f) => (f === '' ? null : f)), next: end + 1, lines: 1 };
      } else {
        record = this.#quoted(text, last);
        if (record === undefined) break;
      }
      if (record.fields.length > 0) out.push({ line: this.#line, fields: record.fields });
      this.#line += record.lines;
      this.#at = record.next;
    }
    if (!last) this.#limit(text.length - this.#at);
    return out;
  }

  /** A record with a quote in it, walked by character; undefined when the text ends before it does. */
  #quoted(text: string, last: boolean): { fields: (string | null)[]; next: number; lines: number } | undefined {
    const fields: (string | null)[] = [];
    let i = this.#at;
    let lines = 1;
    for (;;) {
      if (text.charCodeAt(i) === 34) {
        let value = '';
        let from = i + 1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0) {
            this.#limit(text.length - this.#at);
            if (!last) return undefined;
            throw this.#bad('a quoted field is not closed before the end of the input');
          }
          value += text.slice(from, q);
          if (text.charCodeAt(q + 1) === 34) {
            value += '"';
            from = q + 2;
            continue;
          }
          i = q + 1;
          break;
        }
        for (let k = value.indexOf('\n'); k >= 0; k = value.indexOf('\n', k + 1)) lines++;
        fields.push(value);
      } else {
        let j = i;
        while (j < text.length) {
          const ch = text.charCodeAt(j);
          if (ch === 44 || ch === 10 || (ch === 13 && text.charCodeAt(j + 1) === 10)) break;
          if (ch === 34) throw this.#bad(`a quote inside an unquoted field (field ${fields.length + 1})`);
          j++;
        }
        if (j === text.length && !last) return undefined;
        fields.push(j === i ? null : text.slice(i, j));
        i = j;
      }
      this.#limit(i - this.#at);
      const ch = text.charCodeAt(i);
      if (ch === 44) {
        i++;
        continue;
      }
      if (i >= text.length) {
        if (!last) return undefined;
        return { fields, next: i, lines };
      }
      if (ch === 13 && i + 1 === text.length) return last ? { fields, next: i + 1, lines } : undefined;
      if (ch === 13 && text.charCodeAt(i + 1) === 10) return { fields, next: i + 2, lines };
      if (ch === 10) return { fields, next: i + 1, lines };
      throw this.#bad(`text after a closing quote (field ${fields.length})`);
    }
  }

  #limit(chars: number): void {
    if (chars > this.maxRecordChars)
      throw new BranchgraphError('payload_too_large', `CSV line ${this.#line}: a record is longer than ${this.maxRecordChars} characters`, {
        details: { limit: this.maxRecordChars, line: this.#line },
        issues: [{ path: `line ${this.#line}`, message: `longer than ${this.maxRecordChars} characters` }],
      });
  }

  #bad(message: string): BranchgraphError {
    return new BranchgraphError('invalid_input', `bad CSV at line ${this.#line}: ${message}`, {
      issues: [{ path: `line ${this.#line}`, message }],
    });
  }
}
