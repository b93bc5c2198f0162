/**
 * What a stored query's document says about itself against a branch's
 * typed schema: whether it is valid there, whether it reads or writes, and
 * its variables as a JSON Schema, which is the input schema of the MCP tool
 * the query becomes. Pure: the typed schema comes in, nothing is read.
 *
 * A variable's JSON Schema follows its GraphQL type: `Int`/`SafeInt` an
 * integer, `Float` a number, `String`/`ID`/`Date`/`DateTime` a string,
 * `Boolean` a boolean, an enum its values, a list an array, an input object
 * an object of its fields (nested input objects down to a few levels, then
 * any object), `JSON` anything. A variable is required when its type is
 * non-null and it has no default.
 */
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  Kind,
  parse,
  typeFromAST,
  validate,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

import type { StoredQueryShape } from '../service/typed-graphql-port.js';

type Json = Record<string, unknown>;

/** Input objects nest at most this deep in a variable's schema; deeper, any object. */
const MAX_DEPTH = 4;

export function storedQueryShape(schema: GraphQLSchema, text: string): StoredQueryShape {
  let doc: DocumentNode;
  try {
    doc = parse(text, { maxTokens: 20_000 });
  } catch (e) {
    return { problems: [(e as Error).message] };
  }
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (ops.length !== 1) return { problems: [`a stored query holds exactly one operation; this document holds ${ops.length}`] };
  const op = ops[0] as OperationDefinitionNode;
  if (op.operation === 'subscription') return { problems: ['a stored query is a query or a mutation, not a subscription'] };
  const errors = validate(schema, doc);
  if (errors.length > 0) return { problems: errors.slice(0, 20).map((e) => e.message) };
  const variables: { name: string; type: string; required: boolean }[] = [];
  const properties: Json = {};
  const required: string[] = [];
  for (const v of op.variableDefinitions ?? []) {
    const type = typeFromAST(schema, v.type) as GraphQLInputType;
    const must = type instanceof GraphQLNonNull && v.defaultValue === undefined;
    variables.push({ name: v.variable.name.value, type: String(type), required: must });
    properties[v.variable.name.value] = { ...jsonSchemaOf(type, 0), description: `GraphQL ${String(type)}` };
    if (must) required.push(v.variable.name.value);
  }
  return {
    operation: op.operation,
    variables,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
  };
}

function jsonSchemaOf(type: GraphQLInputType, depth: number): Json {
  if (type instanceof GraphQLNonNull) return jsonSchemaOf(type.ofType, depth);
  if (type instanceof GraphQLList) return { type: 'array', items: jsonSchemaOf(type.ofType, depth) };
  if (type instanceof GraphQLEnumType) return { type: 'string', enum: type.getValues().map((v) => v.name) };
  if (type instanceof GraphQLInputObjectType) {
    if (depth >= MAX_DEPTH) return { type: 'object' };
    const fields = type.getFields();
    return {
      type: 'object',
      properties: Object.fromEntries(Object.values(fields).map((f) => [f.name, jsonSchemaOf(f.type, depth + 1)])),
      additionalProperties: false,
    };
  }
  return scalarSchema(type as GraphQLScalarType);
}

function scalarSchema(t: GraphQLScalarType): Json {
  switch (t.name) {
    case 'Int':
    case 'SafeInt':
      return { type: 'integer' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'String':
    case 'ID':
      return { type: 'string' };
    case 'Date':
      return { type: 'string', format: 'date' };
    case 'DateTime':
      return { type: 'string', format: 'date-time' };
    default:
      return {};
  }
}
