/**
 * JSON parsed from UTF-8 bytes in steps: the value `JSON.parse` gives for
 * the bytes' text, without one call over all of them. A 15 MB request body
 * is 40 ms to decode into one string and 85-100 ms more to parse on this
 * machine's pages, in one piece each; here no call takes more than one
 * piece of about PIECE bytes, and the caller can give the loop a turn
 * between steps.
 *
 * How: a value of at most PIECE bytes is decoded and parsed whole. A larger
 * array or object is walked by a scanner that finds where each of its
 * members ends (strings are skipped with `indexOf`, so long text costs a
 * memchr, not a loop). Runs of small neighbouring members are parsed
 * together (`[` run `]` or `{` run `}`), and a large member is parsed the
 * same way, one level down. Only ASCII bytes (quotes, brackets, commas,
 * colons) are ever split at, so a UTF-8 sequence is never cut.
 *
 * Every byte of text ends up inside some piece given to `JSON.parse`, so
 * strings, numbers and literals are checked by it; the scanner checks the
 * structure around the pieces it splits. Keys named `__proto__` stay own
 * members, as `JSON.parse` has them.
 */
import type { Steps } from './steps.js';

/** Values up to this many bytes are parsed in one `JSON.parse` call. */
export const PIECE = 256 * 1024;
/** Levels of large arrays and objects that are split; deeper ones are parsed whole. */
const SPLIT_DEPTH = 32;
/** Bytes scanned between steps when one member is being measured. */
const SCAN_STEP = 1024 * 1024;

/** Why bytes are not a JSON value: not UTF-8, or not JSON. */
export class JsonBytesError extends Error {
  constructor(readonly kind: 'utf8' | 'syntax') {
    super(kind === 'utf8' ? 'invalid UTF-8' : 'invalid JSON');
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const isSpace = (b: number | undefined): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The value of `bytes`' JSON text (a leading byte order mark is skipped, as decoding skips it). */
export function* jsonParseSteps(bytes: Uint8Array, piece = PIECE): Steps<unknown> {
  return yield* new JsonBytes(bytes, piece).document();
}

class JsonBytes {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly bytes: Uint8Array,
    private readonly piece: number,
  ) {}

  *document(): Steps<unknown> {
    const { bytes } = this;
    if (bytes.length <= this.piece) return this.parse(0, bytes.length);
    const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    const start = this.space(bom);
    const end = yield* this.valueEnd(start);
    if (this.space(end) !== bytes.length) throw new JsonBytesError('syntax');
    return yield* this.value(start, end, 0);
  }

  /**
   * The value between `start` and `end`: parsed whole when small, member by member when not. Only
   * the first SPLIT_DEPTH levels are split, so a large value nested a million levels deep is one
   * `JSON.parse` call (whose parser keeps its own stack) rather than a million nested steps.
   */
  private *value(start: number, end: number, depth: number): Steps<unknown> {
    const first = this.bytes[start];
    if (end - start <= this.piece || depth >= SPLIT_DEPTH || (first !== OPEN_ARRAY && first !== OPEN_OBJECT)) return this.parse(start, end);
    return first === OPEN_ARRAY ? yield* this.array(start, depth) : yield* this.object(start, depth);
  }

  private *array(open: number, depth: number): Steps<unknown[]> {
    const out: unknown[] = [];
    const run = new MemberRun(this.piece, (start, end) => {
      for (const v of this.parse(start, end, '[]') as unknown[]) out.push(v);
    });
    const self = this;
    yield* this.members(open, CLOSE_ARRAY, function* (at) {
      const end = yield* self.valueEnd(at);
      if (end - at > self.piece) {
        run.flush();
        out.push(yield* self.value(at, end, depth + 1));
        yield;
      } else if (run.add(at, end)) yield;
      return end;
    });
    run.flush();
    return out;
  }

  private *object(open: number, depth: number): Steps<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    const run = new MemberRun(this.piece, (start, end) => {
      const part = this.parse(start, end, '{}') as Record<string, unknown>;
      for (const key of Object.keys(part)) setMember(out, key, part[key]);
    });
    const self = this;
    yield* this.members(open, CLOSE_OBJECT, function* (at) {
      if (self.bytes[at] !== QUOTE) throw new JsonBytesError('syntax');
      const keyEnd = self.stringEnd(at);
      const colon = self.space(keyEnd);
      if (self.bytes[colon] !== COLON) throw new JsonBytesError('syntax');
      const start = self.space(colon + 1);
      const end = yield* self.valueEnd(start);
      if (end - start > self.piece) {
        run.flush();
        const key = self.parse(at, keyEnd);
        if (typeof key !== 'string') throw new JsonBytesError('syntax');
        setMember(out, key, yield* self.value(start, end, depth + 1));
        yield;
      } else if (run.add(at, end)) yield;
      return end;
    });
    run.flush();
    return out;
  }

  /** The members of the array or object opened at `open`, each read by `member`, which returns where it ends; the commas between are checked here. */
  private *members(open: number, close: number, member: (at: number) => Steps<number>): Steps<void> {
    let at = this.space(open + 1);
    if (this.bytes[at] === close) return;
    for (;;) {
      at = this.space(yield* member(at));
      const b = this.bytes[at];
      if (b === close) return;
      if (b !== COMMA) throw new JsonBytesError('syntax');
      at = this.space(at + 1);
    }
  }

  /** `JSON.parse` of the text between `start` and `end`, inside the brackets `around` if given. */
  private parse(start: number, end: number, around?: '[]' | '{}'): unknown {
    let text: string;
    try {
      text = this.decoder.decode(this.bytes.subarray(start, end));
    } catch {
      throw new JsonBytesError('utf8');
    }
    try {
      return JSON.parse(around === undefined ? text : `${around[0]}${text}${around[1]}`);
    } catch {
      throw new JsonBytesError('syntax');
    }
  }

  /** The first byte at or after `at` that is not white space. */
  private space(at: number): number {
    while (isSpace(this.bytes[at])) at++;
    return at;
  }

  /** Just past the string whose opening quote is at `at`. */
  private stringEnd(at: number): number {
    const { bytes } = this;
    let from = at + 1;
    for (;;) {
      const quote = bytes.indexOf(QUOTE, from);
      if (quote < 0) throw new JsonBytesError('syntax');
      let slashes = 0;
      while (bytes[quote - 1 - slashes] === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return quote + 1;
      from = quote + 1;
    }
  }

  /**
   * Just past the value that starts at `at`, found by counting brackets outside strings (which
   * bracket closes which, and everything else, is checked when the value is parsed).
   */
  private *valueEnd(at: number): Steps<number> {
    const { bytes } = this;
    const first = bytes[at];
    if (first === undefined) throw new JsonBytesError('syntax');
    if (first === QUOTE) return this.stringEnd(at);
    if (first !== OPEN_ARRAY && first !== OPEN_OBJECT) {
      let i = at;
      for (let b = bytes[i]; b !== undefined && b !== COMMA && b !== CLOSE_ARRAY && b !== CLOSE_OBJECT && !isSpace(b); b = bytes[++i]);
      // No value where one must be (`[1,]`, `{"a":}`): a run of neighbours would hide it.
      if (i === at) throw new JsonBytesError('syntax');
      return i;
    }
    let depth = 0;
    let scanned = at;
    for (let i = at; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === QUOTE) i = this.stringEnd(i) - 1;
      else if (b === OPEN_ARRAY || b === OPEN_OBJECT) depth++;
      else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
        if (--depth === 0) return i + 1;
      }
      if (i - scanned >= SCAN_STEP) {
        scanned = i;
        yield;
      }
    }
    throw new JsonBytesError('syntax');
  }
}

/** Neighbouring small members of one array or object, parsed together once they add up to a piece. */
class MemberRun {
  private start = -1;
  private end = -1;

  constructor(
    private readonly piece: number,
    private readonly parse: (start: number, end: number) => void,
  ) {}

  /** Add the member from `start` to `end`; true when the run before it was parsed first (a step's worth). */
  add(start: number, end: number): boolean {
    const full = this.start >= 0 && end - this.start > this.piece;
    if (full) this.flush();
    if (this.start < 0) this.start = start;
    this.end = end;
    return full;
  }

  flush(): void {
    if (this.start < 0) return;
    this.parse(this.start, this.end);
    this.start = -1;
  }
}

/** `out[key] = value`, where a key named `__proto__` is a member, not the object's prototype. */
function setMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  else out[key] = value;
}
