/**
 * Assembling a generated GraphQL schema a type at a time.
 *
 * graphql-js's `GraphQLSchema` constructor builds its type map by walking
 * every type the roots reach, in one call. For a graph of 1,500 tables
 * (some 16,500 types and 100,000 fields and arguments) that one call held
 * the event loop 55-90 ms, the largest step left in building a typed
 * schema, and the first typed request after such a schema held the loop
 * past 100 ms with it. This walks the same types in the same order as the
 * constructor (a type, then its interfaces, then each field's type and its
 * arguments' types, depth first; the mutation root after the query root;
 * then the directives' argument types and introspection's types), one type
 * a step, resolving each type's fields as it goes, and fills in what the
 * constructor fills in.
 *
 * It relies on graphql-js 16's own field names for a schema's maps.
 * schema-assembly.test.ts compares the result with the constructor's, field
 * by field and the type map in order, so an upgrade that changes them fails
 * there rather than in a request.
 */
import {
  __Schema,
  getNamedType,
  GraphQLSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLDirective,
  type GraphQLInterfaceType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLType,
} from 'graphql';

/** What a generated schema is made of. Generated schemas are valid by construction (typed-schema.ts). */
export interface SchemaRoots {
  query: GraphQLObjectType;
  mutation?: GraphQLObjectType | undefined;
  directives: readonly GraphQLDirective[];
}

type Implementations = { objects: GraphQLObjectType[]; interfaces: GraphQLInterfaceType[] };

/** The fields graphql-js 16's constructor sets on a schema (schema.js). */
interface SchemaFields {
  __validationErrors: readonly [];
  description: undefined;
  extensions: Record<string, unknown>;
  astNode: undefined;
  extensionASTNodes: readonly [];
  _queryType: GraphQLObjectType;
  _mutationType: GraphQLObjectType | undefined;
  _subscriptionType: undefined;
  _directives: readonly GraphQLDirective[];
  _typeMap: Record<string, GraphQLNamedType>;
  _subTypeMap: Record<string, unknown>;
  _implementationsMap: Record<string, Implementations>;
}

/** Types entered in the type map per step: a schema near its size limit has some 200,000. */
const TYPES_PER_STEP = 4096;

/** The schema of `roots`, as `new GraphQLSchema({ ...roots, assumeValid: true })` makes it, a type a step. */
export function* assembleSchema(roots: SchemaRoots): Generator<undefined, GraphQLSchema> {
  const types = new Set<GraphQLNamedType>();
  const starts: GraphQLType[] = [
    roots.query,
    ...(roots.mutation === undefined ? [] : [roots.mutation]),
    ...roots.directives.flatMap((d) => d.args.map((a) => a.type)),
    __Schema,
  ];
  for (const t of starts) yield* collect(t, types);
  const typeMap: Record<string, GraphQLNamedType> = Object.create(null);
  const implementations: Record<string, Implementations> = Object.create(null);
  let mapped = 0;
  for (const t of types) {
    if (++mapped % TYPES_PER_STEP === 0) yield;
    if (typeMap[t.name] !== undefined)
      throw new Error(`Schema must contain uniquely named types but contains multiple types named "${t.name}".`);
    typeMap[t.name] = t;
    if (isInterfaceType(t) || isObjectType(t))
      for (const i of t.getInterfaces()) {
        const of = implementations[i.name] ?? { objects: [], interfaces: [] };
        implementations[i.name] = of;
        if (isInterfaceType(t)) of.interfaces.push(t);
        else of.objects.push(t);
      }
  }
  const fields: SchemaFields = {
    __validationErrors: [],
    description: undefined,
    extensions: Object.create(null),
    astNode: undefined,
    extensionASTNodes: [],
    _queryType: roots.query,
    _mutationType: roots.mutation,
    _subscriptionType: undefined,
    _directives: roots.directives,
    _typeMap: typeMap,
    _subTypeMap: Object.create(null),
    _implementationsMap: implementations,
  };
  return Object.assign(Object.create(GraphQLSchema.prototype) as GraphQLSchema, fields);
}

/** `type` and every type it reaches that `seen` does not hold yet, in the constructor's order, a step each. */
function* collect(type: GraphQLType, seen: Set<GraphQLNamedType>): Generator<undefined> {
  const named = getNamedType(type);
  if (seen.has(named)) return;
  seen.add(named);
  // Resolving a type's fields (graphql-js defines them, with their arguments, on first use) is
  // this step's work: a root of thousands of fields is one step, every other type a small one.
  yield;
  // Checked before descending: most fields name a type seen already, and a walk costs a generator.
  const unseen = (t: GraphQLType): boolean => !seen.has(getNamedType(t));
  if (isUnionType(named)) {
    for (const m of named.getTypes()) if (unseen(m)) yield* collect(m, seen);
  } else if (isObjectType(named) || isInterfaceType(named)) {
    for (const i of named.getInterfaces()) if (unseen(i)) yield* collect(i, seen);
    for (const f of Object.values(named.getFields())) {
      if (unseen(f.type)) yield* collect(f.type, seen);
      for (const a of f.args) if (unseen(a.type)) yield* collect(a.type, seen);
    }
  } else if (isInputObjectType(named)) {
    for (const f of Object.values(named.getFields())) if (unseen(f.type)) yield* collect(f.type, seen);
  }
}
