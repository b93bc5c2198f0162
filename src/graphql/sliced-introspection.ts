/**
 * Introspection answered in slices.
 *
 * A typed schema of thousands of tables has tens of thousands of types, and
 * every client tool asks for all of them (GraphiQL on opening, code
 * generators). graphql-js answers `__schema { types { ... } }` in one
 * synchronous call: at 1,503 tables a 20 MB answer, and with its ordering
 * and serialization the loop was held 1.1-1.3 s.
 *
 * An operation that asks only introspection at its root (`__schema`,
 * `__type`, `__typename`, as plain fields) on a schema of more than
 * SMALL_SCHEMA_TYPES types is answered a batch of types at a time instead:
 * graphql-js executes the same operation over a view of the schema whose
 * type map holds one batch (type-batches.ts), the fields of a large type
 * (a root's thousands) settle a few hundred per turn of the loop, and the
 * batches' `types` lists are joined in the type map's order. Each batch's
 * lists are encoded as the batch is made, and the answer is handed to Yoga
 * as bytes. It is the answer graphql-js gives over the whole schema
 * (sliced-introspection.test.ts compares them byte for byte), built in
 * document order, so the selection-order plugin leaves it as it is. An
 * operation of any other shape, or one whose execution reports an error,
 * runs as before.
 */
import { randomUUID } from 'node:crypto';
import {
  execute,
  getOperationAST,
  isInterfaceType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ByteChunks } from '../model/byte-chunks.js';
import { jsonSteps } from '../model/json-steps.js';
import { nextTurn, runStepsInSlices, Slice } from '../model/turns.js';
import { utf8InSlices } from '../model/utf8-in-slices.js';
import { IN_ORDER } from './selection-order.js';
import { typeBatches, viewWith } from './type-batches.js';

/** Fields of one type described per turn: a root has thousands. */
const FIELDS_PER_TURN = 200;

/** Schemas of at most this many types are described in one go, as graphql-js does. */
const SMALL_SCHEMA_TYPES = 1000;

const INTROSPECTION_ROOTS = new Set(['__schema', '__type', '__typename']);

/** Where an operation's type lists are in its answer: each `__schema` field's key and its `types` keys. */
type TypeLists = { root: string; types: string[] }[];

/**
 * The type lists of an operation that asks only introspection, as plain fields at its root and in
 * each `__schema` selection; undefined for any other operation (it runs as before).
 */
export function introspectionTypeLists(document: DocumentNode, operationName?: string | null): TypeLists | undefined {
  const op = getOperationAST(document, operationName);
  if (op === null || op === undefined || op.operation !== 'query') return undefined;
  const out: TypeLists = [];
  const plain = (s: { kind: Kind; directives?: readonly unknown[] }): s is FieldNode =>
    s.kind === Kind.FIELD && (s.directives?.length ?? 0) === 0;
  for (const s of op.selectionSet.selections) {
    if (!plain(s) || !INTROSPECTION_ROOTS.has(s.name.value)) return undefined;
    if (s.name.value !== '__schema') continue;
    const types: string[] = [];
    for (const f of s.selectionSet?.selections ?? []) {
      if (!plain(f)) return undefined;
      if (f.name.value === 'types') types.push(f.alias?.value ?? f.name.value);
    }
    out.push({ root: s.alias?.value ?? s.name.value, types });
  }
  return out;
}

type Data = Record<string, Record<string, unknown> | null>;

/**
 * `type` as introspection sees it, its fields after the first FIELDS_PER_TURN given as promises
 * that settle a turn of the loop apart, FIELDS_PER_TURN a turn: graphql-js completes a list's items
 * as they settle, so a root of thousands of fields is described over many turns. A deprecated
 * field stays as it is, so that `fields(includeDeprecated: false)` still leaves it out.
 */
function fieldsInTurns(type: GraphQLNamedType): GraphQLNamedType {
  if (!(isObjectType(type) || isInterfaceType(type))) return type;
  const fields = Object.entries(type.getFields());
  if (fields.length <= FIELDS_PER_TURN) return type;
  let defined: Record<string, unknown> | undefined;
  return Object.create(type, {
    getFields: {
      value: () => {
        if (defined !== undefined) return defined;
        defined = Object.create(null) as Record<string, unknown>;
        let turn: Promise<void> = Promise.resolve();
        for (const [i, [name, f]] of fields.entries()) {
          if (i > 0 && i % FIELDS_PER_TURN === 0) turn = turn.then(nextTurn);
          defined[name] = f.deprecationReason != null ? f : turn.then(() => f);
        }
        return defined;
      },
    },
  }) as GraphQLNamedType;
}

/** One type list of the answer: where it goes, and its UTF-8 so far. */
type ListPlace = { root: string; key: string; bytes: Uint8Array[]; items: number };

/**
 * The answer, a batch of types executed at a time, each batch's type lists encoded as soon as they
 * are made; undefined when a batch reports an error. Only the bytes are kept: the objects of a
 * 20 MB answer (some 100 MB of them) would otherwise stay live until the answer is written, and
 * every full collection until then would mark them. The answer's data reads its type lists back
 * from those bytes if anything asks for them.
 */
async function answer(args: ExecutionArgs, lists: TypeLists): Promise<ExecutionResult | undefined> {
  const slice = new Slice();
  // Validation and the other plugins ran in this turn already.
  await slice.turn();
  const places: ListPlace[] = lists.flatMap(({ root, types }) => types.map((key) => ({ root, key, bytes: [Buffer.from('[')], items: 0 })));
  let data: Data | undefined;
  for (const batch of typeBatches(Object.values(args.schema.getTypeMap()))) {
    const r = await execute({ ...args, schema: viewWith(args.schema, batch.map(fieldsInTurns)) });
    // Any error runs the operation as before, so that it is reported as graphql-js reports it.
    if (r.errors !== undefined || r.data == null) return undefined;
    data ??= r.data as Data;
    if (slice.due()) await slice.turn();
    for (const p of places) {
      const list = (r.data[p.root] as Record<string, unknown[]> | null)?.[p.key];
      if (list === undefined || list.length === 0) continue;
      // A batch of one root type is megabytes of text: encoded a field at a time, in slices.
      const text: string[] = [];
      await runStepsInSlices(jsonSteps(list, text));
      text[0] = `${p.items > 0 ? ',' : ''}${(text[0] as string).slice(1)}`;
      text[text.length - 1] = (text.at(-1) as string).slice(0, -1);
      p.bytes.push(await utf8InSlices(text));
      p.items += list.length;
    }
    if (slice.due()) await slice.turn();
  }
  if (data === undefined) return undefined;
  // The rest of the data as text, with a marker where each list goes.
  const marker = `\u0000${randomUUID()}`;
  const found: (ListPlace & { holder: Record<string, unknown>; mark: string })[] = [];
  for (const p of places) {
    const holder = data[p.root];
    if (holder == null) continue;
    p.bytes.push(Buffer.from(']'));
    found.push({ ...p, holder, mark: `${marker}:${found.length}` });
  }
  for (const l of found) setPlain(l.holder, l.key, l.mark);
  const marked = JSON.stringify(data);
  for (const l of found) readBack(l.holder, l.key, l.bytes);
  return withBytes(data, around(marked, found), marker);
}

/** `holder[key] = value` as a plain member, replacing an accessor if one is there. */
function setPlain(holder: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(holder, key, { value, enumerable: true, configurable: true, writable: true });
}

/** `holder[key]` as the list `bytes` encode, decoded the first time it is read. */
function readBack(holder: Record<string, unknown>, key: string, bytes: Uint8Array[]): void {
  const settle = (value: unknown) => setPlain(holder, key, value);
  Object.defineProperty(holder, key, {
    enumerable: true,
    configurable: true,
    get: () => {
      const value: unknown = JSON.parse(new ByteChunks(bytes).toString());
      settle(value);
      return value;
    },
    set: settle,
  });
}

/** `text` as UTF-8 pieces, each of `places` (a string value `mark` in the JSON text) replaced by its bytes. */
function around(text: string, places: { mark: string; bytes: Uint8Array[] }[]): Uint8Array[] {
  const at = places
    .map((p) => ({ ...p, json: JSON.stringify(p.mark), at: text.indexOf(JSON.stringify(p.mark)) }))
    .sort((a, b) => a.at - b.at);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of at) {
    out.push(Buffer.from(text.slice(from, p.at)), ...p.bytes);
    from = p.at + p.json.length;
  }
  out.push(Buffer.from(text.slice(from)));
  return out;
}

/**
 * The result of `data`, whose `stringify` gives the answer's UTF-8 from the data's pieces, made in
 * slices. Yoga serializes a result with its own `stringify` and hands what it gives to the
 * `Response` as its body: the pieces as they are (model/byte-chunks.ts), so that 20 MB of text is
 * neither encoded nor copied there in one piece (where an answer is spliced into text, they read
 * as their UTF-8). Later plugins may add extensions; the data is written from these pieces only
 * while it is still this data.
 */
function withBytes(data: Data, pieces: Uint8Array[], marker: string): ExecutionResult {
  const result: ExecutionResult & { [IN_ORDER]: true; stringify: (r: ExecutionResult) => string } = {
    data,
    [IN_ORDER]: true,
    stringify: (r) => {
      if (r.data !== data) return JSON.stringify(r);
      const mark = `${marker}:data`;
      // Chunks the server's Response streams as they are; anything else reads them as text.
      return new ByteChunks(around(JSON.stringify({ ...r, data: mark }), [{ mark, bytes: pieces }])) as unknown as string;
    },
  };
  return result;
}

const typeCounts = new WeakMap<GraphQLSchema, number>();

/** How many types `schema` has, counted once per schema. */
function typeCount(schema: GraphQLSchema): number {
  let n = typeCounts.get(schema);
  if (n === undefined) {
    n = Object.keys(schema.getTypeMap()).length;
    typeCounts.set(schema, n);
  }
  return n;
}

/** The plugin: introspection-only operations on a schema of more than SMALL_SCHEMA_TYPES types are answered in slices. */
export function slicedIntrospection(): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      // The document first: most are not introspection, and counting a type map is not free.
      const lists = introspectionTypeLists(args.document, args.operationName);
      if (lists === undefined || typeCount(args.schema) <= SMALL_SCHEMA_TYPES) return;
      setExecuteFn(async (a) => (await answer(a, lists)) ?? executeFn(a));
    },
  };
}
