import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Every line of `text` fed in the given chunk sizes. */
function split(text: string, sizes: number[], max = 1 << 20): string[] {
  const bytes = enc(text);
  const s = new LineSplitter(max);
  const out: string[] = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = Math.max(1, sizes[i % Math.max(1, sizes.length)] ?? 1);
    for (const l of s.push(bytes.subarray(at, at + n))) out.push(dec(l));
    at += n;
  }
  const last = s.finish();
  if (last !== undefined) out.push(dec(last));
  return out;
}

describe('LineSplitter', () => {
  it('gives the lines of the text, whatever the chunking (multi-byte characters split across chunks included)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme' }).map((s) => s.replace(/\n/g, '')),
          { maxLength: 8 },
        ),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        (lines, sizes) => {
          const text = lines.join('\n');
          // A trailing newline ends the last line; it starts none.
          const expected = text.split('\n');
          if (expected.at(-1) === '') expected.pop();
          expect(split(text, sizes)).toEqual(expected);
        },
      ),
    );
  });

  it('refuses a line over the limit as soon as its bytes pass it, naming the line, without the rest of it', () => {
    const s = new LineSplitter(10, 'NDJSON line');
    expect(s.push(enc('ok\nfine\n')).map(dec)).toEqual(['ok', 'fine']);
    s.push(enc('123456'));
    let thrown: unknown;
    try {
      // The sixth byte past the limit is refused: the rest of the line is never needed.
      s.push(enc('78901'));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({
      code: 'payload_too_large',
      details: { limit: 10, line: 3 },
      message: 'NDJSON line 3 is longer than 10 bytes',
    });
  });

  it('holds one copy of a pending line: a chunk buffer reused by the stream cannot change it', () => {
    const s = new LineSplitter(100);
    const buf = enc('abc');
    s.push(buf);
    buf.set(enc('xyz'));
    expect(s.push(enc('\n')).map(dec)).toEqual(['abc']);
  });
});
