/**
 * Checking one stored object by what its key says it is, as an object
 * arrives from another store (graph/clone.ts): a branch record, a tag, a
 * manifest and a schema against their stored shapes (a schema against its
 * content address too), a run by its format's signature, and any other
 * JSON object as JSON. What fails is `corrupt_object` naming the key, and
 * is never written. Pure: bytes in, a verdict out.
 */
import { z } from 'zod';
import { BranchgraphError } from '../model/errors.js';
import { SchemaIR, schemaHashOf } from '../model/schema.js';
import { decodeJson } from '../store/stored-json.js';
import { storedText } from '../model/compress-stored.js';
import { BranchRecordZ } from './branch-record.js';
import { StoredManifestZ } from './manifest.js';
import { TagRecordZ } from './tags.js';

const ARROW_MAGIC = 'ARROW1';
const ANY_JSON = z.unknown();

/** Throw `corrupt_object` unless `bytes` are a well-formed object of the kind `key` names. */
export function checkObject(key: string, bytes: Uint8Array): void {
  const bad = (why: string): BranchgraphError =>
    new BranchgraphError('corrupt_object', `${key} is not a well-formed object: ${why}`, { details: { key } });
  if (key.endsWith('.arrow')) {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, ARROW_MAGIC.length)).toString('latin1');
    if (head !== ARROW_MAGIC) throw bad('no Arrow signature');
    return;
  }
  if (!key.endsWith('.json')) throw bad('not a kind of object a graph stores');
  if (key.startsWith('branches/')) {
    decodeJson(BranchRecordZ, bytes, key);
    return;
  }
  if (key.startsWith('tags/')) {
    decodeJson(TagRecordZ, bytes, key);
    return;
  }
  if (key.startsWith('manifests/')) {
    decodeJson(StoredManifestZ, bytes, key);
    return;
  }
  if (key.startsWith('schemas/')) {
    const schema = decodeJson(SchemaIR, bytes, key);
    if (`schemas/${schemaHashOf(schema)}.json` !== key) throw bad('its content does not match its address');
    return;
  }
  // Runs and WAL generations have formats of their own, read against their table's type when used;
  // on arrival they must at least inflate and parse. Everything else carries a checksum trailer.
  if (key.startsWith('runs/') || key.startsWith('wal/')) {
    try {
      JSON.parse(storedText(bytes, key));
    } catch (e) {
      throw bad((e as Error).message);
    }
    return;
  }
  decodeJson(ANY_JSON, bytes, key);
}
