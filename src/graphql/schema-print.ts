/**
 * A generated schema's SDL, printed a batch of types at a time.
 * graphql-js's printSchema prints every type in one call: at 1,503 tables
 * 4.6 MB, and the first `GET …/schema.graphql` held the loop 190-310 ms.
 * printSchema itself prints each part, over views of the schema
 * (type-batches.ts): first its directives alone, then each batch of types,
 * and the parts are joined as printSchema joins its own.
 */
import { printSchema, type GraphQLSchema } from 'graphql';
import { Slice } from '../model/turns.js';
import { typeBatches, viewWith } from './type-batches.js';

/** `printSchema(schema)`, with turns of the loop between batches of types. */
export async function printSchemaInSlices(schema: GraphQLSchema): Promise<string> {
  const slice = new Slice();
  const parts = [printSchema(viewWith(schema, []))];
  for (const batch of typeBatches(Object.values(schema.getTypeMap()))) {
    if (slice.due()) await slice.turn();
    parts.push(printSchema(viewWith(schema, batch, [])));
  }
  return parts.filter((p) => p !== '').join('\n\n');
}
