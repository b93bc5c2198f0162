/**
 * Execution through compiled documents (graphql-jit): a document sent again
 * and again is compiled once per schema into a function that walks its
 * selections directly, where graphql-js interprets the document anew for
 * every request and every object. Compiled queries are cached per schema (a
 * branch's generated schema differs from another's, and the same document
 * text runs on both) and per operation; a document graphql-jit cannot
 * compile runs through graphql-js, which reports what is wrong with it, and
 * so does a request whose variables do not bind.
 *
 * A document with a variable whose input type can contain itself (every
 * typed `where`: `_and`, `_or`, `_not`, and a filter on an edge's end is
 * a filter on the node, which may filter its edges) is never compiled:
 * graphql-jit unrolls a variable's coercion into code over the whole input
 * type, which for a recursive type never ends and fills the heap.
 * Entries are held weakly, as long as the schema and the parsed document
 * are (both in bounded caches).
 *
 * graphql-jit reports an error's locations as plain values, which the HTTP
 * layer drops when it re-creates errors from their nodes; a resolver's error
 * names its field's nodes (typed-context.ts), so it is made again as
 * graphql-js would have made it.
 */
import type { Plugin } from 'graphql-yoga';
import {
  getNamedType,
  getOperationAST,
  GraphQLError,
  isInputObjectType,
  typeFromAST,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLInputObjectType,
  type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

/** Runs of a document on a schema before it is compiled (the default of `jitExecution`). */
export const COMPILE_AFTER = 8;

/**
 * Compiled execution for documents run more than `compileAfter` times. Compiling costs more than
 * a run, and a compiled function run only a few times stays in V8's interpreter, slower than
 * graphql-js's executor, which every request keeps optimized: a document is compiled once it has
 * shown it is one an application sends again.
 */
export function jitExecution(compileAfter = COMPILE_AFTER): Plugin {
  type Entry = { runs: number; query?: CompiledQuery | null };
  const entries = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Entry>>>();
  const entryFor = (schema: GraphQLSchema, document: DocumentNode, operation: string): Entry => {
    let byDoc = entries.get(schema);
    if (byDoc === undefined) {
      byDoc = new WeakMap();
      entries.set(schema, byDoc);
    }
    let byOp = byDoc.get(document);
    if (byOp === undefined) {
      byOp = new Map();
      byDoc.set(document, byOp);
    }
    let e = byOp.get(operation);
    if (e === undefined) {
      e = { runs: 0 };
      byOp.set(operation, e);
    }
    return e;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const e = entryFor(args.schema, args.document, args.operationName ?? '');
      if (e.query === undefined && ++e.runs > compileAfter) {
        if (hasRecursiveVariable(args.schema, args.document, args.operationName ?? undefined)) e.query = null;
        else {
          const c = compileQuery(args.schema, args.document, args.operationName ?? undefined);
          e.query = isCompiledQuery(c) ? c : null;
        }
      }
      const q = e.query;
      if (q !== undefined && q !== null)
        setExecuteFn(async (a) => {
          const r = (await q.query(a.rootValue, a.contextValue, a.variableValues)) as ExecutionResult;
          // No data at all: the variables did not bind. graphql-js reports that (with its locations,
          // and as a request error) the same whether or not the document was compiled.
          return r.data === undefined ? executeFn(a) : located(r);
        });
    },
  };
}

/** Whether a variable of the operation has an input type that can contain itself (see the header). */
export function hasRecursiveVariable(schema: GraphQLSchema, document: DocumentNode, operationName?: string): boolean {
  const op = getOperationAST(document, operationName);
  return (op?.variableDefinitions ?? []).some((v) => {
    const type = typeFromAST(schema, v.type as Parameters<typeof typeFromAST>[1]);
    const named = type === undefined ? undefined : getNamedType(type);
    return isInputObjectType(named) && recursive(schema, named);
  });
}

/** Per schema, whether each input object type can reach itself through its fields. */
const recursiveTypes = new WeakMap<GraphQLSchema, Map<string, boolean>>();

function recursive(schema: GraphQLSchema, type: GraphQLInputObjectType): boolean {
  let known = recursiveTypes.get(schema);
  if (known === undefined) {
    known = new Map();
    recursiveTypes.set(schema, known);
  }
  const cached = known.get(type.name);
  if (cached !== undefined) return cached;
  // Depth-first over input fields: a type met again on the current path closes a cycle; a type
  // explored to the end without one is not explored again (so shared fields cost once).
  const onPath = new Set<string>();
  const acyclic = new Set<string>();
  const reaches = (t: GraphQLInputObjectType): boolean => {
    if (onPath.has(t.name)) return true;
    if (acyclic.has(t.name)) return false;
    onPath.add(t.name);
    const found = Object.values(t.getFields()).some((f) => {
      const n = getNamedType(f.type);
      return isInputObjectType(n) && reaches(n);
    });
    onPath.delete(t.name);
    if (!found) acyclic.add(t.name);
    return found;
  };
  const answer = reaches(type);
  known.set(type.name, answer);
  return answer;
}

/** The result with each resolver error made again from the nodes its original names, as graphql-js locates it. */
function located(result: ExecutionResult): ExecutionResult {
  if (result.errors === undefined || result.errors.length === 0) return result;
  const errors = result.errors.map((e) => {
    const nodes = e.originalError instanceof GraphQLError ? e.originalError.nodes : undefined;
    if (nodes === undefined || e.nodes !== undefined) return e;
    return new GraphQLError(e.message, {
      nodes,
      ...(e.path !== undefined ? { path: e.path } : {}),
      originalError: e.originalError,
      ...(e.extensions !== undefined ? { extensions: e.extensions } : {}),
    });
  });
  return { ...result, errors };
}
