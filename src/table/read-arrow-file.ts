/**
 * Arrow IPC files read in place, without Arrow's general reader.
 *
 * A merge or a scan decodes hundreds of run segments, each an Arrow IPC file
 * holding one record batch of up to 1,024 rows. Arrow's reader pays a fixed
 * cost per file: it decodes the footer and the schema into objects (fields,
 * types, metadata maps), then the record batch's message, then builds each
 * vector through its visitors. On a merge of 100,000 conflicting keys that
 * fixed part took about a fifth of the merge. This reader walks the same
 * flatbuffers where they lie and builds only the vectors.
 *
 * It reads the subset run files are written in: little-endian, one record
 * batch, no dictionaries, no body compression, flat columns of utf8, bool,
 * signed 64-bit int and double. For any other file it answers undefined and
 * the caller reads the file with Arrow's own reader, so every valid Arrow
 * file still reads. It also answers undefined for a file it cannot make
 * sense of: every offset is checked against the bytes before it is read, and
 * Arrow's reader then gives the damaged file its own error.
 *
 * The layout read here is Arrow's `File.fbs`, `Schema.fbs` and
 * `Message.fbs`: a flatbuffer table starts with a signed offset back to its
 * vtable, whose 16-bit entries give each field's offset in the table (0 when
 * the field is absent); offsets to tables, vectors and strings are unsigned
 * and relative to where they are stored.
 */
import { Bool, Float64, Int64, makeData, makeVector, Utf8, type DataType, type Table, type Vector } from 'apache-arrow';

/** What a run decoder needs of an Arrow file: its rows, its schema's metadata, and a column by name. */
export interface ArrowFile {
  readonly numRows: number;
  readonly metadata: ReadonlyMap<string, string>;
  column(name: string): Vector | null;
}

/** A table Arrow's own reader decoded, as an `ArrowFile`. */
export function arrowFileOf(t: Table): ArrowFile {
  return { numRows: t.numRows, metadata: t.schema.metadata, column: (name) => t.getChild(name) };
}

/** The file's columns, or undefined when it is outside the subset read here (or damaged); see the header. */
export function readArrowFile(bytes: Uint8Array): ArrowFile | undefined {
  try {
    return new FileReader(bytes).read();
  } catch (e) {
    if (e instanceof Unreadable || e instanceof RangeError) return undefined;
    throw e;
  }
}

/** The file is outside the subset, or does not hold together. */
class Unreadable extends Error {}

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"
const BLOCK_BYTES = 24; // struct Block { offset: long; metaDataLength: int; (pad); bodyLength: long }
const FIELD_NODE_BYTES = 16; // struct FieldNode { length: long; null_count: long }
const BUFFER_BYTES = 16; // struct Buffer { offset: long; length: long }
const TYPE_INT = 2;
const TYPE_FLOAT = 3;
const TYPE_UTF8 = 5;
const TYPE_BOOL = 6;
const HEADER_RECORD_BATCH = 3;
const PRECISION_DOUBLE = 2;
const TEXT = new TextDecoder('utf-8', { fatal: true });

type Kind = 'utf8' | 'bool' | 'int64' | 'float64';
const BUFFERS: Record<Kind, number> = { utf8: 3, bool: 2, int64: 2, float64: 2 };

class FileReader {
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  read(): ArrowFile {
    const { bytes } = this;
    const n = bytes.length;
    if (n < 18 || MAGIC.some((b, i) => bytes[i] !== b || bytes[n - 6 + i] !== b)) throw new Unreadable('no Arrow file magic');
    const footerLength = this.i32(n - 10);
    const footerStart = n - 10 - footerLength;
    if (footerLength <= 0 || footerStart < 8) throw new Unreadable('footer out of range');
    const footer = this.root(footerStart);
    const schema = this.table(footer, 1);
    if (schema === 0) throw new Unreadable('no schema');
    if (this.vector(footer, 2, BLOCK_BYTES).length > 0) throw new Unreadable('dictionaries');
    const batches = this.vector(footer, 3, BLOCK_BYTES);
    if (batches.length !== 1) throw new Unreadable('not one record batch');
    if (this.scalar(schema, 0, 'i16') !== 0) throw new Unreadable('big-endian');
    const fields = this.fields(schema);
    const metadata = this.metadata(schema);
    const block = batches.start;
    return this.recordBatch(
      { offset: this.i64(block), metaDataLength: this.i32(block + 8), bodyLength: this.i64(block + 16) },
      { fields, metadata },
    );
  }

  /** The schema's fields: name and column kind each, refusing anything outside the subset. */
  private fields(schema: number): { name: string; kind: Kind }[] {
    const out: { name: string; kind: Kind }[] = [];
    const list = this.vector(schema, 1, 4);
    for (let i = 0; i < list.length; i++) {
      const f = this.deref(list.start + 4 * i);
      if (this.table(f, 4) !== 0 || this.vector(f, 5, 4).length > 0) throw new Unreadable('dictionary or nested field');
      out.push({ name: this.string(f, 0), kind: this.kind(this.scalar(f, 2, 'u8'), this.table(f, 3)) });
    }
    return out;
  }

  private kind(typeType: number, type: number): Kind {
    if (typeType === TYPE_UTF8) return 'utf8';
    if (typeType === TYPE_BOOL) return 'bool';
    if (typeType === TYPE_INT && type !== 0 && this.scalar(type, 0, 'i32') === 64 && this.scalar(type, 1, 'u8') === 1) return 'int64';
    if (typeType === TYPE_FLOAT && type !== 0 && this.scalar(type, 0, 'i16') === PRECISION_DOUBLE) return 'float64';
    throw new Unreadable(`column type ${typeType}`);
  }

  private metadata(schema: number): Map<string, string> {
    const out = new Map<string, string>();
    const list = this.vector(schema, 2, 4);
    for (let i = 0; i < list.length; i++) {
      const kv = this.deref(list.start + 4 * i);
      out.set(this.string(kv, 0), this.string(kv, 1));
    }
    return out;
  }

  /** The one record batch's columns, each a vector over the file's own bytes. */
  private recordBatch(
    block: { offset: number; metaDataLength: number; bodyLength: number },
    schema: { fields: { name: string; kind: Kind }[]; metadata: Map<string, string> },
  ): ArrowFile {
    // An encapsulated message: a continuation marker (-1, absent in old files), the metadata's length, the metadata.
    let at = block.offset;
    if (this.i32(at) === -1) at += 4;
    const message = this.root(at + 4);
    if (this.scalar(message, 1, 'u8') !== HEADER_RECORD_BATCH) throw new Unreadable('not a record batch');
    const batch = this.table(message, 2);
    if (batch === 0 || this.table(batch, 3) !== 0) throw new Unreadable('no batch, or a compressed body');
    const numRows = this.scalar(batch, 0, 'i64');
    const nodes = this.vector(batch, 1, FIELD_NODE_BYTES);
    const buffers = this.vector(batch, 2, BUFFER_BYTES);
    const body = block.offset + block.metaDataLength;
    if (body <= at) throw new Unreadable('metadata length out of range');
    if (body + block.bodyLength > this.bytes.length) throw new Unreadable('body out of range');
    if (nodes.length !== schema.fields.length) throw new Unreadable('field nodes differ from the schema');
    const columns = new Map<string, Vector>();
    let b = 0;
    schema.fields.forEach((f, i) => {
      const node = nodes.start + FIELD_NODE_BYTES * i;
      const length = this.i64(node);
      const nullCount = this.i64(node + 8);
      if (length !== numRows || nullCount > length) throw new Unreadable('column length differs from the batch');
      if (b + BUFFERS[f.kind] > buffers.length) throw new Unreadable('too few buffers');
      const buffer = (k: number): Uint8Array => {
        const p = buffers.start + BUFFER_BYTES * (b + k);
        const off = this.i64(p);
        const len = this.i64(p + 8);
        if (off + len > block.bodyLength) throw new Unreadable('buffer out of range');
        return this.bytes.subarray(body + off, body + off + len);
      };
      columns.set(f.name, column(f.kind, { length, nullCount, buffer }));
      b += BUFFERS[f.kind];
    });
    return { numRows, metadata: schema.metadata, column: (name) => columns.get(name) ?? null };
  }

  // Flatbuffer access; every read is bounds-checked by DataView (RangeError) or below.

  private root(at: number): number {
    return at + this.u32(at);
  }

  /** Absolute position of a table's field `slot`, or 0 when absent. */
  private slot(table: number, slot: number): number {
    const vtable = table - this.i32(table);
    const entry = 4 + 2 * slot;
    if (entry + 2 > this.view.getUint16(vtable, true)) return 0;
    const off = this.view.getUint16(vtable + entry, true);
    return off === 0 ? 0 : table + off;
  }

  private deref(at: number): number {
    return at + this.u32(at);
  }

  private table(table: number, slot: number): number {
    const at = this.slot(table, slot);
    return at === 0 ? 0 : this.deref(at);
  }

  private scalar(table: number, slot: number, type: 'u8' | 'i16' | 'i32' | 'i64'): number {
    const at = this.slot(table, slot);
    if (at === 0) return 0;
    if (type === 'u8') return this.view.getUint8(at);
    if (type === 'i16') return this.view.getInt16(at, true);
    return type === 'i32' ? this.i32(at) : this.i64(at);
  }

  private vector(table: number, slot: number, width: number): { start: number; length: number } {
    const at = this.slot(table, slot);
    if (at === 0) return { start: 0, length: 0 };
    const v = this.deref(at);
    const length = this.u32(v);
    if (v + 4 + length * width > this.bytes.length) throw new Unreadable('vector out of range');
    return { start: v + 4, length };
  }

  private string(table: number, slot: number): string {
    const { start, length } = this.vector(table, slot, 1);
    try {
      return TEXT.decode(this.bytes.subarray(start, start + length));
    } catch {
      throw new Unreadable('a name is not UTF-8');
    }
  }

  private u32(at: number): number {
    return this.view.getUint32(at, true);
  }

  private i32(at: number): number {
    return this.view.getInt32(at, true);
  }

  /** A 64-bit length or offset: a non-negative safe integer, or the file is refused. */
  private i64(at: number): number {
    const v = Number(this.view.getBigInt64(at, true));
    if (!Number.isSafeInteger(v) || v < 0) throw new Unreadable('64-bit value out of range');
    return v;
  }
}

/** One column's vector from its buffers (validity first, as Arrow lays them out). */
function column(kind: Kind, c: { length: number; nullCount: number; buffer: (k: number) => Uint8Array }): Vector {
  const { length, nullCount } = c;
  const validity = c.buffer(0);
  if (nullCount > 0 && validity.length < (length + 7) >> 3) throw new Unreadable('validity bitmap too short');
  const base = nullCount > 0 ? { length, nullCount, nullBitmap: validity } : { length, nullCount: 0 };
  const data = c.buffer(1);
  const need = (bytes: number) => {
    if (data.length < bytes) throw new Unreadable('data buffer too short');
  };
  switch (kind) {
    case 'utf8': {
      need(4 * (length + 1));
      const valueOffsets = typed(Int32Array, data, length + 1);
      const values = c.buffer(2);
      let prev = valueOffsets[0] as number;
      if (prev < 0) throw new Unreadable('negative offset');
      for (let i = 1; i <= length; i++) {
        const o = valueOffsets[i] as number;
        if (o < prev) throw new Unreadable('offsets out of order');
        prev = o;
      }
      if (prev > values.length) throw new Unreadable('offsets past the values');
      return vector(new Utf8(), { ...base, valueOffsets, data: values });
    }
    case 'bool':
      need((length + 7) >> 3);
      return vector(new Bool(), { ...base, data });
    case 'int64':
      need(8 * length);
      return vector(new Int64(), { ...base, data: typed(BigInt64Array, data, length) });
    case 'float64':
      need(8 * length);
      return vector(new Float64(), { ...base, data: typed(Float64Array, data, length) });
  }
}

function vector(type: DataType, props: Record<string, unknown>): Vector {
  return makeVector(makeData({ type, ...props } as Parameters<typeof makeData>[0]));
}

/** A typed view of `bytes`, or of a copy when they are not aligned for it (Arrow aligns buffers; a file's bytes may not be). */
function typed<T extends Int32Array | BigInt64Array | Float64Array>(
  Ctor: { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number },
  bytes: Uint8Array,
  count: number,
): T {
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer, bytes.byteOffset, count);
  return new Ctor(bytes.slice(0, count * Ctor.BYTES_PER_ELEMENT).buffer, 0, count);
}
