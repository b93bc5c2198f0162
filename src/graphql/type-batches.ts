/**
 * A generated schema's types in batches of about equal work, and views of
 * the schema that show graphql-js one batch at a time. graphql-js walks a
 * schema's whole type map in one call wherever it describes it (introspection,
 * printing); over a view of one batch, the same call does a batch's share,
 * and the caller gives the event loop a turn between batches.
 */
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  type GraphQLDirective,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';

/**
 * How much a batch holds: a type counts one, and one more per field, argument and enum value.
 * graphql-js describes or prints some 1,000 of these in 5-20 ms: a batch's share of a hold, beside
 * a collection that may fall in the same turn (tens of milliseconds in a large heap).
 */
export const BATCH_WEIGHT = 1000;

/** What describing `type` costs, in BATCH_WEIGHT's units. */
function weightOf(type: GraphQLNamedType): number {
  if (isObjectType(type) || isInterfaceType(type)) return Object.values(type.getFields()).reduce((n, f) => n + 1 + f.args.length, 1);
  if (isInputObjectType(type)) return 1 + Object.keys(type.getFields()).length;
  if (isEnumType(type)) return 1 + type.getValues().length;
  return 1;
}

/** `types` in order, cut into batches of about BATCH_WEIGHT each, weighed as they are asked for. */
export function* typeBatches(types: GraphQLNamedType[]): Generator<GraphQLNamedType[]> {
  let batch: GraphQLNamedType[] = [];
  let weight = 0;
  for (const t of types) {
    const w = weightOf(t);
    if (batch.length > 0 && weight + w > BATCH_WEIGHT) {
      yield batch;
      batch = [];
      weight = 0;
    }
    batch.push(t);
    weight += w;
  }
  if (batch.length > 0) yield batch;
}

/**
 * `schema` as graphql-js sees it with only `types` in its type map (any type is still found by
 * name), and only `directives`, if given.
 */
export function viewWith(schema: GraphQLSchema, types: GraphQLNamedType[], directives?: readonly GraphQLDirective[]): GraphQLSchema {
  const map: Record<string, GraphQLNamedType> = Object.create(null);
  for (const t of types) map[t.name] = t;
  return Object.create(schema, {
    getTypeMap: { value: () => map },
    getType: { value: (name: string) => schema.getType(name) },
    ...(directives === undefined ? {} : { getDirectives: { value: () => directives } }),
  }) as GraphQLSchema;
}
