/**
 * Schemas by content address: a schema is stored once under the hash of
 * its canonical text (`schemas/<hash>`), and read once per process (the
 * hash is its checksum). Manifests name their schema by that hash, and
 * carry it inline when it is small (manifest-codec.ts).
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { PromiseCache } from '../model/promise-cache.js';
import { SchemaIR, schemaHashOf, schemaTextOf, type Schema } from '../model/schema.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson } from '../store/stored-json.js';
import { keys } from './keys.js';

export class SchemaStore {
  constructor(
    private readonly store: ObjectStore,
    private readonly cache: PromiseCache<string, Schema>,
  ) {}

  /** Whether this process holds the schema with `hash`. */
  has(hash: string): boolean {
    return this.cache.has(hash);
  }

  /** The schema with `hash` if this process holds it, without reading it. */
  held(hash: string): Promise<Schema> | undefined {
    return this.cache.peek(hash);
  }

  /**
   * Keep a schema read from elsewhere (a manifest's inline copy, a branch hint's), if it is the
   * schema `hash` names; false when it is not.
   */
  adopt(hash: string, doc: unknown): boolean {
    if (this.cache.has(hash)) return true;
    const parsed = SchemaIR.safeParse(doc);
    if (!parsed.success || schemaHashOf(parsed.data) !== hash) return false;
    this.cache.set(hash, parsed.data);
    return true;
  }

  async write(schema: Schema, signal?: AbortSignal): Promise<string> {
    const text = schemaTextOf(schema);
    const hash = schemaHashOf(schema);
    try {
      await this.store.putIfAbsent(keys.schema(hash), new TextEncoder().encode(text), { signal });
    } catch (e) {
      if (!isBranchgraphError(e, 'object_exists')) throw e;
    }
    this.cache.set(hash, schema);
    return hash;
  }

  read(hash: string, signal?: AbortSignal): Promise<Schema> {
    return this.cache.get(hash, () =>
      this.store.get(keys.schema(hash), { signal }).then((bytes) => {
        const schema = decodeJson(SchemaIR, bytes, keys.schema(hash));
        // A schema's address is the hash of its content: that is its checksum.
        if (schemaHashOf(schema) !== hash)
          throw new BranchgraphError('corrupt_object', `${keys.schema(hash)} does not match its content address`, {
            details: { key: keys.schema(hash) },
          });
        return schema;
      }),
    );
  }
}
