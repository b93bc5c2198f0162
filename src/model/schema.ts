/**
 * The schema IR: what `schema-parser` produces from schema text and what is
 * stored, content-addressed, beside manifests. Every stored schema is read
 * back through `SchemaIR` (zod), so a corrupt object is a typed error.
 */
import { z } from 'zod';
import { canonicalJson, contentHash } from './canonical.js';
import { runSteps, type Steps } from './steps.js';
import { runStepsInSlices } from './turns.js';
import { EDGE_FROM, EDGE_TO } from './key-props.js';

export const SCALAR_KINDS = ['string', 'int', 'float', 'bool', 'date', 'datetime', 'json'] as const;
export type ScalarKind = (typeof SCALAR_KINDS)[number];

/** The longest vector a property may declare. */
export const MAX_VECTOR_DIMS = 4096;

/** How a vector index measures distance: cosine distance (1 − cos), Euclidean distance, or negated inner product. */
export const VECTOR_METRICS = ['cosine', 'l2', 'dot'] as const;
export type VectorMetric = (typeof VECTOR_METRICS)[number];

export const PropTypeIR = z.union([
  z.object({ kind: z.enum(SCALAR_KINDS) }),
  z.object({ kind: z.literal('enum'), values: z.array(z.string()).min(1) }),
  /** A list of exactly `dims` float32 values, none NaN or infinite. */
  z.object({ kind: z.literal('vector'), dims: z.number().int().min(1).max(MAX_VECTOR_DIMS) }),
]);
export type PropType = z.infer<typeof PropTypeIR>;

export const PropDefIR = z.object({
  name: z.string(),
  type: PropTypeIR,
  optional: z.boolean(),
  unique: z.boolean(),
  range: z.object({ min: z.number().nullable(), max: z.number().nullable() }).nullable(),
  /**
   * `@search`: the string is full-text searchable; `stem` adds English stemming. The search
   * attributes are absent from properties that do not use them, so schemas written before them
   * keep their content addresses.
   */
  search: z.object({ stem: z.boolean() }).strict().optional(),
  /** `@index(metric: …)` on a vector: how nearest-neighbour search measures distance. */
  index: z
    .object({ metric: z.enum(VECTOR_METRICS) })
    .strict()
    .optional(),
  /** `@embed(from: prop)` on a vector: filled from that string property by the configured embedder when a write lands. */
  embed: z.object({ from: z.string() }).strict().optional(),
});
export type PropDef = z.infer<typeof PropDefIR>;

export const NodeTypeIR = z.object({
  kind: z.literal('node'),
  name: z.string(),
  props: z.array(PropDefIR),
  /** Key property names, in key order. */
  key: z.array(z.string()).min(1),
});
export type NodeType = z.infer<typeof NodeTypeIR>;

export const EdgeTypeIR = z.object({
  kind: z.literal('edge'),
  name: z.string(),
  from: z.string(),
  to: z.string(),
  /** Declared properties; `from` and `to` are implicit and always first in the key. */
  props: z.array(PropDefIR),
  /** Extra key properties after (from, to), allowing parallel edges. */
  key: z.array(z.string()),
  /** Allowed out-degree per source node, checked for sources whose edges of this type change. */
  cardinality: z.object({ min: z.number().int().min(0), max: z.number().int().min(0).nullable() }).nullable(),
});
export type EdgeType = z.infer<typeof EdgeTypeIR>;

export const TableTypeIR = z.discriminatedUnion('kind', [NodeTypeIR, EdgeTypeIR]);
export type TableType = z.infer<typeof TableTypeIR>;

/**
 * A stored query: a named, described typed-GraphQL document kept with the schema, so it is
 * versioned with the branch and merged as the schema is (schema-merge.ts).
 */
export const StoredQueryIR = z.object({
  name: z.string(),
  description: z.string(),
  document: z.string(),
});
export type StoredQuery = z.infer<typeof StoredQueryIR>;

export const SchemaIR = z.object({
  format: z.literal(1),
  /** Sorted by name. */
  types: z.array(TableTypeIR),
  /** Sorted by name; absent when the branch stores none (so schemas from before stored queries keep their hashes). */
  queries: z.array(StoredQueryIR).optional(),
});
/** A schema's IR: node and edge types with their properties and constraints. */
export type Schema = z.infer<typeof SchemaIR>;

export const EMPTY_SCHEMA: Schema = { format: 1, types: [] };

export { EDGE_FROM, EDGE_TO, keyProps } from './key-props.js';

/** All properties of a table's rows, endpoints included, in stored order. */
export function rowProps(t: TableType): PropDef[] {
  if (t.kind === 'node') return t.props;
  const endpoint = (name: string): PropDef => ({ name, type: { kind: 'string' }, optional: false, unique: false, range: null });
  return [endpoint(EDGE_FROM), endpoint(EDGE_TO), ...t.props];
}

/** Whether a table has anything to search: a `@search` property or a vector. */
export function searchable(t: TableType): boolean {
  return t.props.some((p) => p.search !== undefined || p.type.kind === 'vector');
}

/** Each schema's types by name, built on first use: a schema is never changed once built, and lookups run per type of another schema. */
const typesByName = new WeakMap<Schema, Map<string, TableType>>();

export function findType(schema: Schema, name: string): TableType | undefined {
  let byName = typesByName.get(schema);
  if (byName === undefined || byName.size !== schema.types.length) {
    byName = new Map(schema.types.map((t) => [t.name, t]));
    typesByName.set(schema, byName);
  }
  return byName.get(name);
}

export function tableNames(schema: Schema): string[] {
  return schema.types.map((t) => t.name);
}

/**
 * Schemas and their types are never changed once built, so their canonical text and hash are
 * computed once per object: every commit weighs its schema (is it small enough to ride in the
 * manifest, in the branch hint?), and a schema may declare tens of thousands of tables.
 */
const schemaTexts = new WeakMap<Schema, string>();
const schemaHashes = new WeakMap<Schema, string>();
const typeTexts = new WeakMap<TableType, string>();

/** A schema's canonical JSON (`canonicalJson(schema)`). */
export function schemaTextOf(schema: Schema): string {
  return schemaTexts.get(schema) ?? runSteps(schemaTextSteps(schema));
}

/** The content address of a schema. */
export function schemaHashOf(schema: Schema): string {
  let hash = schemaHashes.get(schema);
  if (hash === undefined) {
    hash = contentHash(schemaTextOf(schema));
    schemaHashes.set(schema, hash);
  }
  return hash;
}

/** The same, its text spelled a type at a time between turns of the loop. */
export async function schemaHashInSlices(schema: Schema): Promise<string> {
  if (!schemaTexts.has(schema)) await runStepsInSlices(schemaTextSteps(schema));
  return schemaHashOf(schema);
}

/**
 * `canonicalJson(schema)`, spelled from each type's canonical text (typeText, a step each): the
 * schema's keys sort `types` last, so its text is the rest's with the types' array at the end.
 */
function* schemaTextSteps(schema: Schema): Steps<string> {
  const { types, ...rest } = schema;
  const texts: string[] = [];
  for (const t of types) {
    texts.push(typeText(t));
    yield;
  }
  const head = canonicalJson({ ...rest, types: [] });
  const end = '"types":[]}';
  if (!head.endsWith(end)) throw new Error(`a schema's canonical text ends with its types: ${head.slice(-40)}`);
  const text = `${head.slice(0, -end.length)}"types":[${texts.join(',')}]}`;
  schemaTexts.set(schema, text);
  return text;
}

/** A type's canonical JSON: equal texts, equal definitions. */
export function typeText(type: TableType): string {
  let text = typeTexts.get(type);
  if (text === undefined) {
    text = canonicalJson(type);
    typeTexts.set(type, text);
  }
  return text;
}
