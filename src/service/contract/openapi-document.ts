/**
 * The OpenAPI document, generated from the operation table. Each operation
 * gives its route (method, path, path parameters, headers), its input
 * contract (query parameters for GET and DELETE, a JSON, NDJSON or streamed
 * body otherwise), its result contract (the success response, and the
 * statuses whose body is a result rather than an error) and its role; every
 * route answers errors in the one envelope (`4XX` and `default`). Result
 * schemas with an id (service/results/) become named components, so clients
 * get `Schemas['Branch']`.
 *
 * What generation cannot know comes from the overlay (`openapi.overlay.yaml`):
 * the document's front matter and the routes outside the table (health,
 * metrics, GraphQL, hosted graphs), and per operation only prose (its
 * description, and a description per parameter, body field and response
 * status) plus two flags (it starts a long operation; its streamed result's
 * media types). Prose for a field the contract no longer has is an error,
 * not silently dropped: `unusedProse` lists it.
 *
 * Pure: the caller reads the overlay and writes the document.
 */
import { z } from 'zod';
import { bodyFieldsOf, bodyMedia, isTextMedia, type Operation } from '../operation.js';
import { ErrorEnvelopeZ } from '../results/error.js';

/** The prose and flags the overlay gives one operation. */
export interface OperationProse {
  description?: string;
  /** By the parameter's name on the wire (`id`, `at`, `Idempotency-Key`). */
  parameters?: Record<string, string>;
  /** By the body field's name. */
  body?: Record<string, string>;
  /** By status: the description of that response. */
  responses?: Record<string, string>;
  /** It starts a long operation: it takes the `Operation-Id` header. */
  longOperation?: boolean;
  /** A streamed result: its media types. */
  media?: string[];
}

export interface Overlay {
  /** The document around the operations: openapi, info, servers, security, components and the routes outside the table. */
  document: Record<string, unknown> & {
    paths: Record<string, Record<string, unknown>>;
    components: Record<string, Record<string, unknown>>;
  };
  operations: Record<string, OperationProse>;
}

type Json = Record<string, unknown>;
const COMPONENTS = '#/components/schemas/';
const ERROR = { $ref: '#/components/responses/Error' };

/** The document: the overlay's routes and components, and one route per operation, in table order. */
export function openApiDocument(ops: readonly Operation[], overlay: Overlay): { document: Json; unusedProse: string[] } {
  const schemas: Json = { ...overlay.document.components.schemas };
  // Every route's errors are the envelope (the 4XX and default responses, and 409 beside a result).
  jsonSchemaOf(ErrorEnvelopeZ, 'output', { schemas, unused: [] });
  const paths: Record<string, Json> = structuredClone(overlay.document.paths);
  const unused: string[] = [];
  for (const op of ops) {
    const prose = overlay.operations[op.name] ?? {};
    paths[op.http.path] = { ...paths[op.http.path], [op.http.method.toLowerCase()]: operationObject(op, prose, { schemas, unused }) };
  }
  for (const name of Object.keys(overlay.operations))
    if (!ops.some((o) => o.name === name)) unused.push(`operations.${name}: no such operation`);
  const document = {
    ...overlay.document,
    paths,
    components: { ...overlay.document.components, schemas: sortedKeys(schemas) },
  };
  return { document, unusedProse: unused };
}

interface Collect {
  /** Named result schemas met so far, by id. */
  schemas: Json;
  unused: string[];
}

function operationObject(op: Operation, prose: OperationProse, c: Collect): Json {
  const { http } = op;
  const used = { parameters: new Set<string>(), body: new Set<string>(), responses: new Set<string>() };
  const describe = (kind: keyof typeof used, name: string): { description?: string } => {
    const text = prose[kind]?.[name];
    if (text === undefined) return {};
    used[kind].add(name);
    return { description: text };
  };
  const input = jsonSchemaOf(op.input, 'input', c) as Json & { properties?: Record<string, Json>; required?: string[] };
  const fields = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const bound = new Set<string>();
  const parameters: Json[] = [];
  for (const [, name] of http.path.matchAll(/\{(\w+)\}/g)) {
    const field = http.params?.[name as string] ?? (name as string);
    bound.add(field);
    parameters.push({
      name,
      in: 'path',
      required: true,
      ...describe('parameters', name as string),
      schema: fields[field] ?? { type: 'string' },
    });
  }
  for (const [header, field] of Object.entries(http.headers ?? {})) {
    bound.add(field);
    const wire = headerName(header);
    parameters.push({
      name: wire,
      in: 'header',
      required: false,
      ...describe('parameters', wire),
      schema: fields[field] ?? { type: 'string' },
    });
  }
  if (prose.longOperation === true) parameters.push({ $ref: '#/components/parameters/OperationId' });
  for (const f of http.omit ?? []) bound.add(f);
  const carried = bodyFieldsOf(http);
  const rest = Object.entries(fields).filter(([f]) => !bound.has(f) && !carried.has(f));
  const reads = http.method === 'GET' || http.method === 'DELETE';
  // A body taken as it is leaves the other fields to the query string.
  if (reads || carried.size > 0)
    for (const [name, schema] of rest)
      parameters.push({ name, in: 'query', required: required.has(name), ...describe('parameters', name), schema: queryValue(schema) });
  const out: Json = {
    operationId: op.name,
    summary: op.summary,
    ...(prose.description !== undefined ? { description: prose.description } : {}),
  };
  if (parameters.length > 0) out.parameters = parameters;
  if (!reads) out.requestBody = requestBody(op, { rest, required, describe, fields });
  out.responses = responses(op, prose, { describe, c });
  for (const kind of ['parameters', 'body', 'responses'] as const)
    for (const name of Object.keys(prose[kind] ?? {}))
      if (!used[kind].has(name))
        c.unused.push(`operations.${op.name}.${kind}.${name}: the contract has no such ${kind === 'body' ? 'field' : kind.slice(0, -1)}`);
  return out;
}

function requestBody(
  op: Operation,
  a: {
    rest: [string, Json][];
    required: Set<string>;
    describe: (kind: 'body', name: string) => { description?: string };
    fields: Record<string, Json>;
  },
): Json {
  const { http } = op;
  const media = bodyMedia(http);
  if (media.length > 0) {
    const content = Object.fromEntries(
      media.map(([m, field]) => {
        const said = a.fields[field]?.description;
        const description = a.describe('body', field).description ?? said;
        return [
          m,
          {
            schema: {
              type: 'string',
              ...(isTextMedia(m) ? {} : { format: 'binary' }),
              ...(description !== undefined ? { description } : {}),
            },
          },
        ];
      }),
    );
    return { required: true, content };
  }
  const properties = Object.fromEntries(a.rest.map(([name, schema]) => [name, { ...schema, ...a.describe('body', name) }]));
  const needed = a.rest.map(([name]) => name).filter((n) => a.required.has(n));
  return {
    required: needed.length > 0,
    content: {
      'application/json': {
        schema: { type: 'object', additionalProperties: false, ...(needed.length > 0 ? { required: needed } : {}), properties },
      },
    },
  };
}

function responses(
  op: Operation,
  prose: OperationProse,
  a: { describe: (kind: 'responses', s: string) => { description?: string }; c: Collect },
): Json {
  const { http } = op;
  const success = String(typeof http.status === 'number' ? http.status : 200);
  const out: Json = {};
  const text = (status: string, fallback: string) => a.describe('responses', status).description ?? fallback;
  if (http.stream !== undefined) {
    const media = prose.media ?? ['application/octet-stream'];
    out[success] = {
      description: text(success, 'The result, streamed.'),
      content: Object.fromEntries(media.map((m) => [m, { schema: { type: 'string', format: 'binary' } }])),
    };
  } else {
    const schema = jsonSchemaOf(op.output, 'output', a.c);
    const alternatives = (schema.anyOf as Json[] | undefined) ?? [schema];
    // Statuses whose body is a result, not an error: the alternatives after the first (a merge's conflicts answer 409).
    const others = http.resultStatuses ?? [];
    out[success] = { description: text(success, 'The result.'), content: json(others.length > 0 ? (alternatives[0] as Json) : schema) };
    for (const status of others)
      out[String(status)] = {
        description: text(String(status), 'A result, or an error.'),
        content: json({ oneOf: [...alternatives.slice(1), { $ref: `${COMPONENTS}ErrorEnvelope` }] }),
      };
  }
  out['4XX'] = ERROR;
  out.default = ERROR;
  return out;
}

const json = (schema: Json): Json => ({ 'application/json': { schema } });

/** A query parameter's schema: values arrive as text, so anything but a scalar is spelled as JSON (or ref) text. */
function queryValue(schema: Json): Json {
  const scalar = ['string', 'integer', 'number', 'boolean'].includes(schema.type as string) || schema.enum !== undefined;
  if (scalar) return schema;
  const { description } = schema as { description?: string };
  return { type: 'string', ...(description !== undefined ? { description } : {}) };
}

/** `idempotency-key` as HTTP documents spell it: `Idempotency-Key`. */
function headerName(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_, dash: string, ch: string) => `${dash}${ch.toUpperCase()}`);
}

/**
 * The JSON Schema of a zod schema, with every schema that has an id moved into the named
 * components and referenced from where it was used. The bounds zod writes for every integer
 * (±2^53-1) say nothing a reader needs, and are left out.
 */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output', c: Collect): Json {
  const options = { io, unrepresentable: 'any' as const, uri: (id: string) => `${COMPONENTS}${id}` };
  const raw = z.toJSONSchema(schema, options) as Json & { $defs?: Json };
  const { $schema: _, $defs, ...rest } = raw;
  for (const [id, def] of Object.entries($defs ?? {})) c.schemas[id] ??= tidy(def);
  const top = tidy(rest) as Json & { id?: string };
  if (typeof top.id === 'string') {
    const { id, ...body } = top;
    c.schemas[id] ??= body;
    return { $ref: `${COMPONENTS}${id}` };
  }
  return top;
}

const SAFE = 9007199254740991;

function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if ((k === 'minimum' && v === -SAFE) || (k === 'maximum' && v === SAFE)) continue;
    if (k === '$ref' && typeof v === 'string') out[k] = v.replace(/^#\/\$defs\//, COMPONENTS);
    else out[k] = tidy(v);
  }
  return out;
}

function sortedKeys(o: Json): Json {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
