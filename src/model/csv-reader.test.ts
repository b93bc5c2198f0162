import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvReader, type CsvRecord } from './csv-reader.js';

/** A field as a CSV writer spells it: null as nothing, text quoted when it must be (or when asked). */
const spell = (f: string | null, quoteAnyway: boolean): string =>
  f === null ? '' : quoteAnyway || f === '' || /[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f;

function readAll(text: string, cuts: number[] = [], max = 1 << 20): CsvRecord[] {
  const r = new CsvReader(max);
  const out: CsvRecord[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(...r.push(text.slice(from, cut)));
    from = cut;
  }
  out.push(...r.push(text.slice(from)), ...r.finish());
  return out;
}

describe('CsvReader', () => {
  it('reads back what a writer wrote, however the text is cut, with the line each record starts on', () => {
    const field = fc.option(fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r', ' ', 'é') }), { nil: null });
    const record = fc.array(field, { minLength: 1, maxLength: 5 }).filter((fs) => fs.length > 1 || fs[0] !== null);
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), fc.boolean(), fc.boolean(), fc.array(fc.nat()), (records, crlf, quoteAll, cuts) => {
        const eol = crlf ? '\r\n' : '\n';
        const lines = records.map((fs) => fs.map((f) => spell(f, quoteAll)).join(','));
        const text = lines.map((l) => l + eol).join('');
        let line = 1;
        const expected = records.map((fields, i) => {
          const r = { line, fields };
          line += (lines[i] as string).split('\n').length;
          return r;
        });
        const got = readAll(
          text,
          cuts.map((c) => c % (text.length + 1)),
        );
        expect(got).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('tells a field written as nothing (null) from a quoted empty one, and skips blank lines', () => {
    expect(readAll('a,,""\n\n\r\nb,c,d')).toEqual([
      { line: 1, fields: ['a', null, ''] },
      { line: 4, fields: ['b', 'c', 'd'] },
    ]);
  });

  it('names the line of a malformed record', () => {
    expect(() => readAll('a,b\nc,"d\n')).toThrow(/line 2: a quoted field is not closed/);
    expect(() => readAll('a,b\nc,d"e\n')).toThrow(/line 2: a quote inside an unquoted field/);
    expect(() => readAll('a,b\n"c"d,e\n')).toThrow(/line 2: text after a closing quote/);
  });

  it('refuses a record over the limit by its line, without waiting for its end', () => {
    const r = new CsvReader(10);
    expect(r.push('a,b\n')).toEqual([{ line: 1, fields: ['a', 'b'] }]);
    expect(() => r.push('"never closed, and longer than ten')).toThrow(/CSV line 2: a record is longer than 10/);
    expect(() => readAll('0123456789012\n', [], 10)).toThrow(/payload|longer/);
  });

  it('reads a large file without quotes in time linear in its length', () => {
    const text = 'k,v\n'.repeat(200_000);
    const r = new CsvReader(1000);
    expect(r.push(text).length + r.finish().length).toBe(200_000);
  });
});
