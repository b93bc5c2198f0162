/**
 * Query depth and alias limits, as a validation rule: deep or alias-heavy
 * documents are refused before any resolver runs, with a stable code.
 */
import {
  getNamedType,
  getVariableValues,
  GraphQLError,
  isObjectType,
  Kind,
  type FieldNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export function depthAndAliasLimit(maxDepth: number, maxAliases: number) {
  const rule = (ctx: ValidationContext): ASTVisitor => {
    let depth = 0;
    let aliases = 0;
    return {
      SelectionSet: {
        enter() {
          depth++;
          if (depth === maxDepth + 1)
            ctx.reportError(new GraphQLError(`query depth is limited to ${maxDepth}`, { extensions: { code: 'invalid_input' } }));
        },
        leave() {
          depth--;
        },
      },
      Field(node) {
        if (node.alias !== undefined && ++aliases === maxAliases + 1) {
          ctx.reportError(new GraphQLError(`a query may use at most ${maxAliases} aliases`, { extensions: { code: 'invalid_input' } }));
        }
      },
    };
  };
  return {
    onValidate({ addValidationRule }: { addValidationRule: (r: (ctx: ValidationContext) => ASTVisitor) => void }) {
      addValidationRule(rule);
    },
  };
}

/**
 * Brackets nested deeper than `max` anywhere in a document (selections,
 * argument lists, input literals) refuse it before graphql-js parses it:
 * its parser recurses per level, and a document a few thousand levels deep
 * would overflow the stack. One pass over the text, strings skipped.
 */
export function nestingLimit(max: number) {
  return {
    onParse({ params }: { params: { source: string | { body: string } } }) {
      const text = typeof params.source === 'string' ? params.source : params.source.body;
      let depth = 0;
      for (let i = 0; i < text.length; i++) {
        const ch = text[i];
        if (ch === '"') {
          // Skip a string (block strings too: their quotes pair up the same way).
          for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
        } else if (ch === '#') {
          while (i < text.length && text[i] !== '\n') i++;
        } else if (ch === '{' || ch === '[' || ch === '(') {
          if (++depth > max)
            throw new GraphQLError(`the document nests brackets deeper than ${max} levels`, {
              extensions: { code: 'invalid_input', http: { status: 400 } },
            });
        } else if (ch === '}' || ch === ']' || ch === ')') depth--;
      }
    },
  };
}

/**
 * Cost of a document before it runs: every field costs one, and a field
 * with a `limit` or `first` argument (a page) costs its page size times its
 * selection, so fifty aliased `rows(limit: 1000)` cost fifty thousand rows.
 * Pages without a size use their default: `defaultLimit` for the API's
 * lists, `connectionDefault` for the typed API's connections (a field whose
 * type has `pageInfo`). A page size given by a variable counts as
 * execution will see it: coerced, its default applied when the request
 * leaves it out. Documents over `max` are refused with `invalid_input` and
 * the cost, before any resolver runs; so are raw variables nested deeper
 * than `maxNesting`, before anything coerces them.
 */
export function costLimit(a: { max: number; defaultLimit: number; maxNesting: number; connectionDefault?: number }) {
  const { max, defaultLimit, maxNesting, connectionDefault = 100 } = a;
  type Doc = { schema: GraphQLSchema | undefined; fragments: Map<string, FragmentDefinitionNode>; vars: Record<string, unknown> };
  const pageSize = (
    sel: FieldNode,
    parent: GraphQLNamedType | undefined,
    doc: Doc,
  ): { size: number; type: GraphQLNamedType | undefined } => {
    const def = parent !== undefined && isObjectType(parent) ? parent.getFields()[sel.name.value] : undefined;
    const type = def === undefined ? undefined : getNamedType(def.type);
    const arg = sel.arguments?.find((a) => a.name.value === 'limit' || a.name.value === 'first');
    const isConnection = type !== undefined && isObjectType(type) && type.getFields().pageInfo !== undefined;
    const dflt = isConnection ? connectionDefault : defaultLimit;
    if (arg !== undefined) {
      // Variables come coerced, their defaults applied (see onExecute).
      const raw = arg.value.kind === Kind.VARIABLE ? doc.vars[arg.value.name.value] : undefined;
      const v = arg.value.kind === Kind.INT ? Number(arg.value.value) : typeof raw === 'number' ? raw : dflt;
      return { size: Number.isFinite(v) && v >= 0 ? Math.max(v, 1) : dflt, type };
    }
    return { size: sel.name.value === 'log' || sel.name.value === 'rows' || isConnection ? dflt : 1, type };
  };
  const costOf = (set: SelectionSetNode | undefined, c: { parent: GraphQLNamedType | undefined; doc: Doc; seen: Set<string> }): number => {
    const { doc, seen } = c;
    let total = 0;
    for (const sel of set?.selections ?? []) {
      if (sel.kind === Kind.FIELD) {
        const { size, type } = pageSize(sel, c.parent, doc);
        total += 1 + size * costOf(sel.selectionSet, { parent: type, doc, seen });
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const cond = sel.typeCondition === undefined ? c.parent : doc.schema?.getType(sel.typeCondition.name.value);
        total += costOf(sel.selectionSet, { parent: cond ?? undefined, doc, seen });
      } else if (!seen.has(sel.name.value)) {
        const frag = doc.fragments.get(sel.name.value);
        const cond = frag === undefined ? undefined : doc.schema?.getType(frag.typeCondition.name.value);
        total += costOf(frag?.selectionSet, { parent: cond ?? undefined, doc, seen: new Set(seen).add(sel.name.value) });
      }
      if (total > max) return total;
    }
    return total;
  };
  return {
    onExecute({
      args,
      setResultAndStopExecution,
    }: {
      args: {
        schema?: GraphQLSchema;
        document: DocumentNode;
        variableValues?: Record<string, unknown> | null | undefined;
        operationName?: string | null | undefined;
      };
      setResultAndStopExecution: (r: unknown) => void;
    }) {
      const refuse = (message: string, extensions: Record<string, unknown>) =>
        setResultAndStopExecution({ errors: [new GraphQLError(message, { extensions: { code: 'invalid_input', ...extensions } })] });
      // Raw variables nested past the document's own bracket limit are refused before graphql-js
      // coerces them: its coercion recurses per level, and a few thousand levels overflow the stack.
      const raw = args.variableValues ?? {};
      if (nestedDeeperThan(raw, maxNesting)) {
        refuse(`variables nest deeper than ${maxNesting} levels`, { limit: maxNesting });
        return;
      }
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const d of args.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      for (const d of args.document.definitions) {
        if (d.kind !== Kind.OPERATION_DEFINITION || (args.operationName && d.name?.value !== args.operationName)) continue;
        // Counted on the values execution will use: coerced, defaults applied. Variables that do not
        // coerce fail execution anyway, with graphql-js's own error; they cost nothing here.
        const coerced = args.schema === undefined ? undefined : getVariableValues(args.schema, d.variableDefinitions ?? [], raw);
        const doc: Doc = { schema: args.schema, fragments, vars: coerced?.coerced ?? {} };
        const root = d.operation === 'mutation' ? args.schema?.getMutationType() : args.schema?.getQueryType();
        const cost = costOf(d.selectionSet, { parent: root ?? undefined, doc, seen: new Set() });
        if (cost > max) {
          refuse(`the query costs more than its limit of ${max} (fields times page sizes): ask for fewer rows or split the query`, {
            limit: max,
            cost,
          });
          return;
        }
      }
    },
  };
}

/** Whether `value` (JSON) nests objects and arrays deeper than `max`; iterative, so any depth is safe to ask about. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

// BAD_REQUEST is Yoga's code for a body that is not a GraphQL request at all (invalid JSON, no query).
const GRAPHQL_INPUT_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST']);

/**
 * Documents that do not parse, validate or bind their variables are the
 * client's mistake: report them with the closed set's `invalid_input` (and
 * masked unexpected failures as `internal`), keeping GraphQL's own code
 * beside it as `graphqlCode`.
 */
export function closedSetErrorCodes(count: (code: string) => void = () => undefined) {
  return {
    onResultProcess({ result, setResult }: { result: unknown; setResult: (r: never) => void }) {
      const closed = closeErrorCodes(result, count);
      if (closed !== result) setResult(closed as never);
    },
  };
}

type WithErrors = { errors?: readonly GraphQLError[] } | null;

/**
 * `closedSetErrorCodes` on one result (or a batch of them), for a caller that processes results
 * itself: the result with each error that needed a code given one, or the result itself. Errors are
 * copied, never changed in place: an error may be shared (a cached failure) or have a read-only
 * `extensions` (compiled execution's variable errors).
 */
export function closeErrorCodes<R>(result: R, count: (code: string) => void): R {
  if (Array.isArray(result)) return result.map((r: unknown) => closeErrorCodes(r, count)) as R;
  const errors = (result as WithErrors)?.errors;
  if (errors === undefined || errors.length === 0) return result;
  let changed = false;
  const closed = errors.map((e) => {
    const code = e.extensions?.code;
    let extensions: Record<string, unknown> | undefined;
    // graphql-js reports variable coercion failures with no code at all.
    if (code === undefined || (typeof code === 'string' && GRAPHQL_INPUT_CODES.has(code)))
      extensions = { ...e.extensions, code: 'invalid_input', ...(code !== undefined ? { graphqlCode: code } : {}) };
    else if (code === 'INTERNAL_SERVER_ERROR') extensions = { ...e.extensions, code: 'internal', graphqlCode: code };
    count(String(extensions?.code ?? code));
    if (extensions === undefined) return e;
    changed = true;
    return withExtensions(e, extensions);
  });
  return changed ? { ...result, errors: closed } : result;
}

/** A copy of `e` (its class, message, locations, path and cause kept) with other extensions. */
function withExtensions(e: GraphQLError, extensions: Record<string, unknown>): GraphQLError {
  return Object.create(Object.getPrototypeOf(e) as object, {
    ...Object.getOwnPropertyDescriptors(e),
    extensions: { value: extensions, writable: true, enumerable: true, configurable: true },
  }) as GraphQLError;
}
