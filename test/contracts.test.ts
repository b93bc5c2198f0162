/**
 * The operation table is the one definition of every operation; the GraphQL
 * SDL and `openapi.yaml` are generated from it (these checks on them guard
 * the generators). These tests hold the documents to the table: every operation has its route (same method, path
 * and operationId) and its GraphQL fields, and each carries exactly the
 * operation's input fields, each of a matching kind and, over REST,
 * required exactly when the contract requires it. A field added to an
 * operation and not to a document (or the reverse) fails here, naming both.
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLArgument,
  type GraphQLInputType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { inputFields, type FieldKind } from '../src/service/input-fields.js';
import { OPERATION_LIST } from '../src/service/operation-table.js';
import { bodyMedia, type Operation } from '../src/service/operation.js';
import { graphqlText } from '../scripts/graphql-file.js';
import { OPENAPI as doc, resolveRef, type OpenApiParam, type OpenApiSchema } from './support/openapi.js';

type Schema = OpenApiSchema;
type Param = OpenApiParam;
const sdl = buildSchema(readFileSync('schema/branchgraph.graphql', 'utf8'));

const resolve = resolveRef;

/** What kinds of OpenAPI value an input field of each kind may be spelled as. */
function openapiKind(s: Schema, where: 'path' | 'query' | 'header' | 'body'): FieldKind[] {
  if (s.$ref === '#/components/schemas/Ref') return ['ref'];
  const r = resolve(s) as Schema & { anyOf?: Schema[]; const?: unknown };
  // A union (a value or null, a set of numbers) is what its alternatives are.
  if (r.anyOf !== undefined) {
    const alternatives = r.anyOf.filter((a) => a.type !== 'null');
    if (alternatives.every((a) => typeof (a as { const?: unknown }).const === 'number')) return ['number'];
    return [...new Set(alternatives.flatMap((a) => openapiKind(a, where)))];
  }
  const type = Array.isArray(r.type) ? r.type.find((t) => t !== 'null') : r.type;
  if (r.enum !== undefined) return r.enum.every((v) => typeof v === 'number') ? ['enum', 'number'] : ['enum'];
  // Refs, filters and numbers arrive as query text; what they are is the contract's to say.
  if (where === 'query' && type === 'string') return ['string', 'ref', 'object'];
  if (type === 'integer' || type === 'number') return ['number'];
  if (type === 'boolean') return ['boolean'];
  if (type === 'array') return ['array'];
  if (type === 'object' || r.properties !== undefined || r.oneOf !== undefined) return ['object'];
  return ['string'];
}

/** The route's input fields as openapi.yaml gives them: name, kinds allowed, required. */
function restFields(op: Operation): Map<string, { kinds: FieldKind[]; required: boolean }> {
  const item = doc.paths[op.http.path] ?? {};
  const method = item[op.http.method.toLowerCase()] ?? {};
  const out = new Map<string, { kinds: FieldKind[]; required: boolean }>();
  for (const p of [...((item as { parameters?: Param[] }).parameters ?? []), ...(method.parameters ?? [])].map(resolve)) {
    if (p.in === 'header' && p.name === 'Operation-Id') continue;
    const name =
      p.in === 'path'
        ? (op.http.params?.[p.name] ?? p.name)
        : p.in === 'header'
          ? (op.http.headers?.[p.name.toLowerCase()] ?? `header ${p.name}`)
          : p.name;
    out.set(name, { kinds: openapiKind(p.schema, p.in as 'path'), required: p.required === true });
  }
  for (const [type, media] of Object.entries(method.requestBody?.content ?? {})) {
    const carried = Object.fromEntries(bodyMedia(op.http));
    if (carried[type] !== undefined) out.set(carried[type], { kinds: ['string', 'stream'], required: false });
    else {
      const body = resolve(media.schema);
      for (const [name, s] of Object.entries(body.properties ?? {}))
        out.set(name, { kinds: openapiKind(s, 'body'), required: (body.required ?? []).includes(name) });
    }
  }
  return out;
}

function graphqlKinds(t: GraphQLInputType): FieldKind[] {
  const inner = isNonNullType(t) ? t.ofType : t;
  if (isListType(inner)) return ['array'];
  const named = getNamedType(inner);
  if (isEnumType(named)) return ['enum', 'string'];
  if (isInputObjectType(named)) return ['object'];
  if (named.name === 'Int' || named.name === 'Float') return ['number'];
  if (named.name === 'Boolean') return ['boolean'];
  if (named.name === 'JSON') return ['object'];
  return ['string', 'ref', 'enum'];
}

/** A GraphQL field's arguments, with an `input` argument's fields in its place. */
function graphqlFields(args: readonly GraphQLArgument[]): Map<string, FieldKind[]> {
  const out = new Map<string, FieldKind[]>();
  for (const a of args) {
    const named = getNamedType(a.type);
    if (a.name === 'input' && isInputObjectType(named))
      for (const f of Object.values(named.getFields())) out.set(f.name, graphqlKinds(f.type));
    else out.set(a.name, graphqlKinds(a.type));
  }
  return out;
}

describe('the documents agree with the operation table', () => {
  it('schema/branchgraph.graphql is what `npm run contracts` generates from the table and the overlay', () => {
    expect(readFileSync('schema/branchgraph.graphql', 'utf8') === graphqlText(), 'run `npm run contracts` and commit the result').toBe(
      true,
    );
  });

  it.each(OPERATION_LIST.map((op) => [op.name, op] as const))(
    '%s: openapi.yaml has its route, operationId, input fields and their kinds',
    (_name, op) => {
      const method = doc.paths[op.http.path]?.[op.http.method.toLowerCase()];
      expect(method?.operationId, `${op.http.method} ${op.http.path}`).toBe(op.name);
      const documented = restFields(op);
      const fields = inputFields(op.input).filter((f) => !(op.http.omit ?? []).includes(f.name));
      expect([...documented.keys()].sort()).toEqual(fields.map((f) => f.name).sort());
      for (const f of fields) {
        const d = documented.get(f.name);
        expect(d?.kinds, `${op.name}.${f.name} is ${f.kind}`).toContain(f.kind);
        // A field the route cannot do without is one the contract requires (NDJSON bodies aside: one of two fields).
        if (op.http.body === undefined) expect(d?.required, `${op.name}.${f.name} required`).toBe(f.required);
      }
    },
  );

  it.each(OPERATION_LIST.flatMap((op) => (op.graphql ?? []).map((g) => [`${g.type}.${g.field}`, op, g] as const)))(
    '%s: the SDL has the field, with the operation input fields as its arguments',
    (_name, op, g) => {
      const field = (g.type === 'Query' ? sdl.getQueryType() : sdl.getMutationType())?.getFields()[g.field];
      expect(field, `${g.type}.${g.field}`).toBeDefined();
      const documented = graphqlFields(field?.args ?? []);
      const fields = inputFields(op.input).filter((f) => !(g.omit ?? []).includes(f.name));
      expect([...documented.keys()].sort()).toEqual(fields.map((f) => f.name).sort());
      for (const f of fields) expect(documented.get(f.name), `${g.field}(${f.name}) is ${f.kind}`).toContain(f.kind);
    },
  );

  it('every field of Query and Mutation is some operation', () => {
    const bound = new Set(OPERATION_LIST.flatMap((op) => (op.graphql ?? []).map((g) => `${g.type}.${g.field}`)));
    const declared = [sdl.getQueryType(), sdl.getMutationType()].flatMap((t) =>
      Object.keys(t?.getFields() ?? {}).map((f) => `${t?.name}.${f}`),
    );
    expect(declared.filter((f) => !bound.has(f))).toEqual([]);
  });

  it('every operation name is unique, and so is every route', () => {
    const names = OPERATION_LIST.map((op) => op.name);
    const routes = OPERATION_LIST.map((op) => `${op.http.method} ${op.http.path}`);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(routes).size).toBe(routes.length);
  });
});
