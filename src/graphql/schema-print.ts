/**
 * A generated schema's SDL, printed a batch of types at a time.
 * graphql-js's printSchema prints every type in one call: at 1,503 tables
 * 4.6 MB, and the first `GET …/schema.graphql` held the loop 190-310 ms.
 * printSchema itself prints each part, over views of the schema
 * (type-batches.ts): first its directives alone, then each batch of types,
 * and the parts are joined as printSchema joins its own.
 *
 * A root type has a field per table and operation (13,500 at 1,503
 * tables), too many for one call; it is printed FIELDS_PER_PART fields at a
 * time, each part over a view of the type that has only those fields, and
 * the parts' field lines are joined inside one block. printSchema puts a
 * blank line before a described field unless it opens its block; a part's
 * first field opens that part's block but not the type's, so it gets that
 * blank line back.
 */
import { isObjectType, printSchema, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { Slice } from '../model/turns.js';
import { typeBatches, viewWith } from './type-batches.js';

/** Fields of one type printed in one call. */
export const FIELDS_PER_PART = 250;

/** `printSchema(schema)`, with turns of the loop between batches of types and parts of a large type. */
export async function printSchemaInSlices(schema: GraphQLSchema): Promise<string> {
  const slice = new Slice();
  const parts = [printSchema(viewWith(schema, []))];
  for (const batch of typeBatches(Object.values(schema.getTypeMap()))) {
    if (slice.due()) await slice.turn();
    const [only] = batch;
    const large = batch.length === 1 && isObjectType(only) && Object.keys(only.getFields()).length > FIELDS_PER_PART;
    parts.push(large ? await printLargeType(schema, only, slice) : printSchema(viewWith(schema, batch, [])));
  }
  return parts.filter((p) => p !== '').join('\n\n');
}

/** `type` as printSchema prints it, FIELDS_PER_PART fields a call. */
async function printLargeType(schema: GraphQLSchema, type: GraphQLObjectType, slice: Slice): Promise<string> {
  const fields = Object.values(type.getFields());
  const print = (some: GraphQLField<unknown, unknown>[]) => {
    const view = Object.create(type, { getFields: { value: () => Object.fromEntries(some.map((f) => [f.name, f])) } });
    return printSchema(viewWith(schema, [view], []));
  };
  // With no fields printSchema prints no block: what comes before the block, description and all.
  const head = print([]);
  const bodies: string[] = [];
  for (let from = 0; from < fields.length; from += FIELDS_PER_PART) {
    if (slice.due()) await slice.turn();
    const part = fields.slice(from, from + FIELDS_PER_PART);
    const text = print(part);
    const body = text.slice(head.length + ' {\n'.length, -'\n}'.length);
    bodies.push(from > 0 && part[0]?.description != null ? `\n${body}` : body);
  }
  return `${head} {\n${bodies.join('\n')}\n}`;
}
