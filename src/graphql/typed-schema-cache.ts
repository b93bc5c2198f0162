/**
 * Generated schemas by graph-schema content hash: each is built once and
 * kept while in use. Bounded: a graph with many schema versions in its
 * history keeps only the most recently used ones.
 */
import type { Schema } from '../model/schema.js';
import type { TypedSchema } from './typed-context.js';
import { buildTypedSchemaYielding } from './typed-schema.js';
import { printSchemaInSlices } from './schema-print.js';

export const TYPED_SCHEMA_CACHE_SIZE = 32;

/** A generated schema with its SDL and the query GraphiQL opens with. */
export interface ServedSchema {
  hash: string;
  typed: TypedSchema;
  /** The SDL, printed (in slices) when first asked for. */
  sdl(): Promise<string>;
  example: string;
}

export class TypedSchemaCache {
  private readonly byHash = new Map<string, Promise<ServedSchema>>();

  constructor(private readonly size = TYPED_SCHEMA_CACHE_SIZE) {}

  /**
   * The generated schema of `schema`, whose content hash is `hash` (a manifest names it: no request
   * rehashes the schema). Built once per hash, between turns of the event loop; requests that need
   * it meanwhile wait for the same build.
   */
  get(hash: string, schema: Schema): Promise<ServedSchema> {
    let s = this.byHash.get(hash);
    if (s !== undefined) {
      // Most recently used last, so the first entry is the one to drop.
      this.byHash.delete(hash);
    } else {
      s = served(hash, schema);
      // A failed build is not kept: the next request builds again.
      s.catch(() => {
        if (this.byHash.get(hash) === s) this.byHash.delete(hash);
      });
    }
    this.byHash.set(hash, s);
    if (this.byHash.size > this.size) this.byHash.delete(this.byHash.keys().next().value as string);
    return s;
  }
}

async function served(hash: string, schema: Schema): Promise<ServedSchema> {
  const typed = await buildTypedSchemaYielding(schema);
  // The SDL is printed when first asked for (`GET …/schema.graphql`), not by every first query.
  let sdl: Promise<string> | undefined;
  return {
    hash,
    typed,
    sdl() {
      sdl ??= printSchemaInSlices(typed.schema);
      return sdl;
    },
    example: exampleQuery(typed),
  };
}

/** A first query for GraphiQL: a page of the first node table, with its key and properties. */
function exampleQuery(ts: TypedSchema): string {
  const node = [...ts.types.values()].find((t) => t.kind === 'node');
  if (node === undefined) return '# This branch has no node tables yet: apply a schema, then reload.\n{ __typename }\n';
  const n = ts.names.get(node.name);
  if (n === undefined) return '{ __typename }\n';
  const fields = [n.fields.key, ...node.props.slice(0, 6).map((p) => n.fields.props[p.name])].join(' ');
  return `# Run with the play button or Ctrl-Enter. The docs on the right list every table's fields.\nquery First${n.type} {\n  ${n.query}(first: 10) {\n    totalCount\n    edges { cursor node { ${fields} } }\n    pageInfo { hasNextPage endCursor }\n  }\n}\n`;
}
