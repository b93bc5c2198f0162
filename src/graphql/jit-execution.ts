/**
 * Execution through compiled documents (graphql-jit): a document sent again
 * and again is compiled once per schema into a function that walks its
 * selections directly, where graphql-js interprets the document anew for
 * every request and every object. Compiled queries are cached per schema (a
 * branch's generated schema differs from another's, and the same document
 * text runs on both) and per operation; a document graphql-jit cannot
 * compile runs through graphql-js, which reports what is wrong with it.
 * Entries are held weakly, as long as the schema and the parsed document
 * are (both in bounded caches).
 *
 * graphql-jit reports an error's locations as plain values, which the HTTP
 * layer drops when it re-creates errors from their nodes; a resolver's error
 * names its field's nodes (typed-context.ts), so it is made again as
 * graphql-js would have made it.
 */
import type { Plugin } from 'graphql-yoga';
import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
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
    onExecute({ args, setExecuteFn }) {
      const e = entryFor(args.schema, args.document, args.operationName ?? '');
      if (e.query === undefined && ++e.runs > compileAfter) {
        const c = compileQuery(args.schema, args.document, args.operationName ?? undefined);
        e.query = isCompiledQuery(c) ? c : null;
      }
      const q = e.query;
      if (q !== undefined && q !== null)
        setExecuteFn(async (a) => located((await q.query(a.rootValue, a.contextValue, a.variableValues)) as ExecutionResult));
    },
  };
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
