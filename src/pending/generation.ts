/**
 * WAL generations: sealed, immutable batches of resolved row states.
 *
 * A writer (one shard, a stable writer identity) appends generations to a
 * branch lineage at `wal/<lineage>/<shard>/<seq>.json`, create-only. Only
 * that writer creates keys under its shard, and it takes `seq` = last + 1,
 * so a shard's generations are dense and never overwritten.
 *
 * A generation holds *resolved* states: the full row after the operation
 * (or a tombstone), computed against the branch's view when it was sealed.
 * It can therefore be overlaid on any later view as if it were a run.
 *
 * Order. Pending generations overlay the branch's tables in the order
 * (stamp, shard, seq): the seal time in milliseconds (kept strictly
 * increasing within a shard), then the shard name, then the sequence
 * number; the later one wins per key. A generation no publication has seen
 * yet is newer than everything already folded.
 */
import { isReservedName } from '../model/text.js';
import { z } from 'zod';
import { bytesHash, contentHash } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';
import type { Row } from '../model/values.js';
import type { RunRef, RunRow } from '../table/run.js';
import { compareKey } from '../table/run.js';
import { decodeJson, decodeJsonInSlices, encodeJson, encodeJsonInSlices } from '../store/stored-json.js';

export const GENERATION_FORMAT = 1;
const SHARD_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One row state in a generation: [key, content hash ('' for a tombstone), row or null]. */
type State = [string, string, Record<string, unknown> | null];

/**
 * Checked by hand, not by a zod tuple per row: the check is the same, but
 * zod copies every state and row object, which made decoding a generation
 * cost three times its JSON parse (catch-up decodes megabytes of them).
 */
function isStates(v: unknown): v is State[] {
  if (!Array.isArray(v)) return false;
  for (const s of v) {
    if (!Array.isArray(s) || s.length !== 3 || typeof s[0] !== 'string' || typeof s[1] !== 'string') return false;
    const row = s[2];
    if (row !== null && (typeof row !== 'object' || Array.isArray(row))) return false;
  }
  return true;
}
const StatesZ = z.custom<State[]>(isStates, 'row states must be [key, hash, row or null] triples');

const GenerationZ = z.object({
  format: z.literal(GENERATION_FORMAT),
  lineage: z.string(),
  shard: z.string().regex(SHARD_RE),
  seq: z.number().int().min(1),
  stamp: z.number().int().min(0),
  schema: z.string(),
  tables: z.record(z.string(), StatesZ),
  /** Hash of the serialized `tables`: a flipped digit in a stored generation is caught, not folded. */
  checksum: z.string().optional(),
});
export type Generation = z.infer<typeof GenerationZ>;

/** What a reader needs of a generation: its identity, order and object. */
export interface GenerationInfo {
  key: string;
  shard: string;
  seq: number;
  stamp: number;
  bytes: number;
  /** Digest of the stored object: which object a fold read at this sequence number. */
  digest: string;
  /** Row states per table; absent when the generation was listed without decoding its rows. */
  rows?: Record<string, number>;
}

export const walKeys = {
  lineagePrefix: (lineage: string): string => `wal/${lineage}/`,
  shardPrefix: (lineage: string, shard: string): string => `wal/${lineage}/${shard}/`,
  generation: (lineage: string, shard: string, seq: number): string => `wal/${lineage}/${shard}/${String(seq).padStart(12, '0')}.json`,
};

/** Parse `wal/<lineage>/<shard>/<seq>.json`; undefined for any other key. */
export function parseGenerationKey(key: string): { lineage: string; shard: string; seq: number } | undefined {
  const m = /^wal\/([^/]+)\/([^/]+)\/(\d{12})\.json$/.exec(key);
  if (m === null || !isValidShard(m[2] as string)) return undefined;
  const seq = Number(m[3]);
  return seq >= 1 ? { lineage: m[1] as string, shard: m[2] as string, seq } : undefined;
}

/** A shard name is a key of watermark records: the pattern, and none of the reserved names. */
export function isValidShard(shard: string): boolean {
  return SHARD_RE.test(shard) && !isReservedName(shard);
}

export function validateShard(shard: string): void {
  if (!isValidShard(shard)) {
    throw new BranchgraphError(
      'invalid_input',
      `shard ${JSON.stringify(shard)} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, and not a reserved name such as constructor`,
      {
        issues: [{ path: 'shard', message: 'invalid shard name' }],
      },
    );
  }
}

export function compareGenerations(
  a: Pick<GenerationInfo, 'stamp' | 'shard' | 'seq'>,
  b: Pick<GenerationInfo, 'stamp' | 'shard' | 'seq'>,
): number {
  return a.stamp - b.stamp || compareKey(a.shard, b.shard) || a.seq - b.seq;
}

function tablesChecksum(tables: Generation['tables']): string {
  return contentHash(JSON.stringify(tables));
}

export function encodeGeneration(g: Omit<Generation, 'checksum'>): Uint8Array {
  return encodeJson(generationDoc(g), { plain: true });
}

/** `encodeGeneration` in slices of the event loop, for a generation that may hold megabytes of rows. */
export function encodeGenerationInSlices(g: Omit<Generation, 'checksum'>): Promise<Uint8Array> {
  return encodeJsonInSlices(generationDoc(g), { plain: true });
}

function generationDoc(g: Omit<Generation, 'checksum'>): object {
  // The stored-object checksum covers every byte; the rows' own checksum is only read from older generations.
  // Fields in this order: a reader takes the identity and stamp from the first bytes (readGenerationHeader).
  return { format: g.format, lineage: g.lineage, shard: g.shard, seq: g.seq, stamp: g.stamp, schema: g.schema, tables: g.tables };
}

/** What orders a generation: enough to list pending generations without decoding their rows. */
export interface GenerationHeader {
  lineage: string;
  shard: string;
  seq: number;
  stamp: number;
}

const HEADER_RE = /^\{"format":1,"lineage":"([0-9A-Za-z]+)","shard":"([A-Za-z0-9._-]+)","seq":(\d{1,15}),"stamp":(\d{1,15}),/;

/**
 * The identity and stamp of a stored generation, from its first bytes
 * (encodeGeneration writes them first), checked against its key; undefined
 * when the object does not start that way (then decode it whole). The rest
 * is checked when the rows are decoded, before anything is folded.
 */
export function readGenerationHeader(file: Uint8Array, key: string): GenerationHeader | undefined {
  const m = HEADER_RE.exec(new TextDecoder().decode(file.subarray(0, 256)));
  if (m === null) return undefined;
  const header = { lineage: m[1] as string, shard: m[2] as string, seq: Number(m[3]), stamp: Number(m[4]) };
  checkKey(header, key);
  return header;
}

function checkKey(g: Pick<GenerationHeader, 'lineage' | 'shard' | 'seq'>, key: string): void {
  const at = parseGenerationKey(key);
  if (at === undefined || at.lineage !== g.lineage || at.shard !== g.shard || at.seq !== g.seq) {
    throw new BranchgraphError('corrupt_object', `${key} names another generation (${g.lineage}/${g.shard}/${g.seq})`, {
      details: { key },
    });
  }
}

export function decodeGeneration(bytes: Uint8Array, key: string): Generation {
  return checkedGeneration(decodeJson(GenerationZ, bytes, key), key);
}

/** `decodeGeneration` in slices of the event loop, for a generation that may hold megabytes of rows. */
export async function decodeGenerationInSlices(bytes: Uint8Array, key: string): Promise<Generation> {
  return checkedGeneration(await decodeJsonInSlices(GenerationZ, bytes, key), key);
}

function checkedGeneration(g: Generation, key: string): Generation {
  if (g.checksum !== undefined && tablesChecksum(g.tables) !== g.checksum)
    throw new BranchgraphError('corrupt_object', `${key} does not match its checksum`, { details: { key } });
  checkKey(g, key);
  for (const [table, states] of Object.entries(g.tables)) {
    for (let i = 1; i < states.length; i++) {
      if (compareKey(states[i - 1]?.[0] ?? '', states[i]?.[0] ?? '') >= 0) {
        throw new BranchgraphError('corrupt_object', `${key}: ${table} states are not in key order`, { details: { key } });
      }
    }
  }
  return g;
}

/** The states of one table as run rows. */
export function generationRows(g: Generation, table: string): RunRow[] {
  return (g.tables[table] ?? []).map(([key, hash, props]) => ({ key, tomb: props === null, hash, props: props as Row | null }));
}

export function infoOf(a: {
  g: GenerationHeader & Partial<Pick<Generation, 'tables'>>;
  key: string;
  bytes: number;
  hash: string;
}): GenerationInfo {
  const { g, key, bytes, hash } = a;
  return {
    key,
    shard: g.shard,
    seq: g.seq,
    stamp: g.stamp,
    bytes,
    digest: digestOf(hash),
    ...(g.tables !== undefined ? { rows: Object.fromEntries(Object.entries(g.tables).map(([t, s]) => [t, s.length])) } : {}),
  };
}

/** A short digest of a stored generation object, recorded by the publication that folds it. */
export function generationDigest(file: Uint8Array): string {
  return digestOf(bytesHash(file));
}

function digestOf(hash: string): string {
  return hash.slice(0, 16);
}

/** `seq:digest` entries per shard, as a manifest records the generations its publication folded. */
export function foldedEntries(gens: readonly Pick<GenerationInfo, 'shard' | 'seq' | 'digest'>[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const g of gens) {
    out[g.shard] ??= [];
    out[g.shard]?.push(`${g.seq}:${g.digest}`);
  }
  return out;
}

/** A run reference that reads one table of a pending generation; never published. */
export function virtualRunRef(a: { g: Generation; key: string; table: string; bytes: number; hash: string }): RunRef {
  const { g, key, table, bytes, hash } = a;
  const rows = g.tables[table] ?? [];
  return {
    // Unique per generation and table, for the run cache.
    key: `${key}#${table}`,
    rows: rows.length,
    tombstones: rows.filter((s) => s[2] === null).length,
    bytes,
    minKey: rows[0]?.[0] ?? '',
    maxKey: rows[rows.length - 1]?.[0] ?? '',
    checksum: hash,
    source: { kind: 'pending', generation: key, table },
  };
}

/** Whether a run reads a pending WAL generation (folded into a stored run when published). */
export function isPendingRun(ref: RunRef): ref is RunRef & { source: { kind: 'pending'; generation: string; table: string } } {
  return ref.source?.kind === 'pending';
}

/**
 * A read listed a generation as pending, and a publication folded and
 * deleted it before the read got to it: the branch moved on under the
 * request. Retryable (`publish_contention`); head resolution and catch-up
 * start over when they see it, by type, not by inspecting details.
 */
export class GenerationFoldedError extends BranchgraphError {
  constructor(key: string, cause: unknown) {
    super('publish_contention', `the branch moved while this request read its pending rows (${key} was folded); retry`, {
      cause,
      details: { key },
    });
  }
}
