/**
 * A `BranchgraphApi` over the admin GraphQL API, derived from the
 * operation table as the REST client is (rest-client.ts): each
 * operation with a GraphQL field is one method that sends one document.
 *
 * The document comes from the generated SDL: the field's arguments as
 * variables of the types the SDL gives them, and a selection of every
 * field of its type, recursively (`__typename` and each member for a
 * union). The input is spread over the arguments as the resolvers gather
 * it (an `input` object holding all but the route's path parameters, when
 * the binding names one), with refs spelt as text and an NDJSON body sent
 * as its list of operations. The answer comes back as the operation's
 * result: a picked field is put back in its place, and a reshaped value is
 * read back by the binding's `receive`. Errors come back as the typed
 * error their `extensions.code` names.
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  isObjectType,
  isUnionType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { z } from 'zod';
import { errorFromBody, type ErrorBody } from '../model/errors.js';
import { refText, type BranchgraphApi } from '../service/api.js';
import { inputFields } from '../service/input-fields.js';
import type { GraphqlBinding, Operation } from '../service/operation.js';
import { OPERATION_LIST } from '../service/operation-table.js';
import { SDL_PATH } from '../graphql/graphql-schema.js';

/** How deep a selection goes: deeper than any result type, and a bound on a type that holds itself. */
const MAX_DEPTH = 8;

let sdl: GraphQLSchema | undefined;

/** What one operation's calls share: worked out on its first call, once per process, since a client is made per use. */
interface CallPlan {
  op: Operation;
  g: GraphqlBinding<unknown>;
  field: GraphQLField<unknown, unknown>;
  selection: string;
  kinds: Map<string, string>;
  resultSchema: Js;
  pathFields: Set<string>;
}

const plans = new Map<string, CallPlan>();

/** A client for the GraphQL endpoint at `url` (a server's `/graphql`, or a hosted graph's). */
export function graphqlClient(url: string, opts: { token?: string } = {}): BranchgraphApi {
  const api: Record<string, unknown> = {};
  for (const op of OPERATION_LIST) {
    const g = bindingOf(op);
    api[op.name] =
      g === undefined
        ? async () => {
            throw new Error(`${op.name} has no GraphQL field`);
          }
        : (input: Record<string, unknown> = {}) => call(planOf(op, g), { url, token: opts.token, input });
  }
  return api as BranchgraphApi;
}

/** The field that answers the whole result if there is one, else one that picks from it, else one that reshapes it. */
function bindingOf(op: Operation): GraphqlBinding<unknown> | undefined {
  const gs = (op.graphql ?? []) as GraphqlBinding<unknown>[];
  return gs.find((g) => g.result === undefined && g.pick === undefined) ?? gs.find((g) => g.pick !== undefined) ?? gs[0];
}

function planOf(op: Operation, g: GraphqlBinding<unknown>): CallPlan {
  let plan = plans.get(op.name);
  if (plan !== undefined) return plan;
  sdl ??= buildSchema(readFileSync(SDL_PATH, 'utf8'));
  const root = g.type === 'Query' ? sdl.getQueryType() : sdl.getMutationType();
  const field = root?.getFields()[g.field] as GraphQLField<unknown, unknown>;
  plan = {
    op,
    g,
    field,
    selection: selectionOf(field.type, 0),
    kinds: new Map(inputFields(op.input).map((f) => [f.name, f.kind])),
    resultSchema: z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }) as Js,
    pathFields: new Set([...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => op.http.params?.[m[1] ?? ''] ?? m[1] ?? '')),
  };
  plans.set(op.name, plan);
  return plan;
}

/** Only the arguments given: an absent page size is the server's default, not a variable it must cost at the maximum. */
function documentOf(p: CallPlan, given: Record<string, unknown>): string {
  const args = p.field.args.filter((arg) => given[arg.name] !== undefined);
  const vars = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const call = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  return `${p.g.type === 'Query' ? 'query' : 'mutation'}${vars ? `(${vars})` : ''} { r: ${p.g.field}${call ? `(${call})` : ''}${p.selection} }`;
}

async function call(p: CallPlan, a: { url: string; token?: string | undefined; input: Record<string, unknown> }): Promise<unknown> {
  const { g } = p;
  const spelt = spell(a.input, p.kinds, g);
  const variables: Record<string, unknown> = {};
  if (g.input === undefined) Object.assign(variables, spelt);
  else {
    const inner = Object.fromEntries(Object.entries(spelt).filter(([k]) => !p.pathFields.has(k)));
    Object.assign(variables, Object.fromEntries(Object.entries(spelt).filter(([k]) => p.pathFields.has(k))));
    if (Object.keys(inner).length > 0) variables.input = inner;
  }
  const value = await post(a.url, { document: documentOf(p, variables), variables, token: a.token });
  const result =
    g.pick !== undefined ? { [g.pick]: value } : g.result !== undefined && g.receive !== undefined ? g.receive(value, a.input) : value;
  return withoutAbsentNulls(result, { schema: p.resultSchema, defs: p.resultSchema.$defs ?? {} });
}

/** The input as GraphQL arguments take it: absent fields left out, refs as text, an NDJSON body as its operations. */
function spell(input: Record<string, unknown>, kinds: Map<string, string>, g: GraphqlBinding<unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    if ((g.omit ?? []).includes(k)) {
      // GraphQL carries ingest as a list of operations: NDJSON text is sent as its lines.
      if (k === 'ndjson' && typeof v === 'string')
        out.ops = v
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as unknown);
      continue;
    }
    out[k] = kinds.get(k) === 'ref' && typeof v === 'object' && v !== null ? refText(v as Parameters<typeof refText>[0]) : v;
  }
  return out;
}

/** Every field of a result type, recursively; a union's members by `__typename`. */
function selectionOf(type: Parameters<typeof getNamedType>[0], depth: number): string {
  const named = getNamedType(type) as GraphQLNamedType;
  if (depth >= MAX_DEPTH) return '';
  if (isUnionType(named))
    return ` { __typename ${named
      .getTypes()
      .map((m) => `... on ${m.name}${selectionOf(m, depth + 1)}`)
      .join(' ')} }`;
  if (!isObjectType(named)) return '';
  const fields = Object.values(named.getFields()).map((f) => `${f.name}${selectionOf(f.type, depth + 1)}`);
  return ` { ${fields.join(' ')} }`;
}

type Js = {
  $ref?: string;
  $defs?: Record<string, Js>;
  type?: string | string[];
  anyOf?: Js[];
  oneOf?: Js[];
  properties?: Record<string, Js>;
  items?: Js;
};

/**
 * GraphQL answers null for a field the result leaves out: drop each null the result contract does
 * not allow (an optional field), so the result is what the other transports answer.
 */
function withoutAbsentNulls(value: unknown, at: { schema: Js; defs: Record<string, Js> }): unknown {
  const s = resolved(at.schema, at.defs);
  if (Array.isArray(value)) return value.map((v) => withoutAbsentNulls(v, { schema: s.items ?? {}, defs: at.defs }));
  if (value === null || typeof value !== 'object') return value;
  const alternatives = (s.anyOf ?? s.oneOf ?? []).map((x) => resolved(x, at.defs)).filter((x) => x.properties !== undefined);
  // A union member is the one whose fields the value has.
  const shape = s.properties !== undefined ? s : alternatives.find((x) => Object.keys(value).every((k) => k in (x.properties ?? {})));
  if (shape?.properties === undefined) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const field = shape.properties[k];
    if (v === null && field !== undefined && !allowsNull(resolved(field, at.defs), at.defs)) continue;
    out[k] = field === undefined ? v : withoutAbsentNulls(v, { schema: field, defs: at.defs });
  }
  return out;
}

function resolved(s: Js, defs: Record<string, Js>): Js {
  return s.$ref !== undefined ? (defs[s.$ref.replace(/^#\/\$defs\//, '')] ?? {}) : s;
}

function allowsNull(s: Js, defs: Record<string, Js>): boolean {
  if (s.type === undefined && s.anyOf === undefined && s.oneOf === undefined) return true;
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  return (s.anyOf ?? s.oneOf ?? []).some((x) => allowsNull(resolved(x, defs), defs));
}

/** One GraphQL document POSTed to `url` (an admin or a branch's typed endpoint), its answer as JSON, whatever it holds. */
export async function postGraphql(
  url: string,
  body: { document: string; variables?: Record<string, unknown> | undefined; token?: string | undefined; signal?: AbortSignal | undefined },
): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(body.token !== undefined ? { authorization: `Bearer ${body.token}` } : {}),
    },
    body: JSON.stringify({ query: body.document, variables: body.variables }),
    ...(body.signal !== undefined ? { signal: body.signal } : {}),
  });
  return res.json();
}

async function post(
  url: string,
  body: { document: string; variables: Record<string, unknown>; token?: string | undefined },
): Promise<unknown> {
  const answer = (await postGraphql(url, body)) as {
    data?: { r?: unknown };
    errors?: { message: string; extensions?: Partial<ErrorBody> }[];
  };
  const e = answer.errors?.[0];
  if (e !== undefined) throw errorFromBody({ ...e.extensions, message: e.message }, e.message);
  return answer.data?.r;
}
