/**
 * The MCP tools, derived from the operation table as the REST routes and
 * the GraphQL fields are: each `mcp` binding of an operation is one tool.
 * Its input schema is the operation's own input contract (JSON Schema from
 * zod, as `openapi.yaml` has it) less the fields the binding fixes; its
 * output schema is the result contract. Its annotations say what a model
 * may assume: a GET is read-only and idempotent; the binding says whether
 * it may destroy data or is safe to repeat. Pure: no I/O.
 */
import { z } from 'zod';
import { errorFromBody, type ErrorBody } from '../model/errors.js';
import type { BranchgraphApi } from '../service/api.js';
import type { Role } from '../service/auth.js';
import type { McpBinding, Operation } from '../service/operation.js';
import { OPERATION_LIST, OPERATIONS } from '../service/operation-table.js';

type Json = Record<string, unknown>;

/** What a tool runs on: the API, and the typed GraphQL of a branch where the transport has it. */
export interface ToolPorts {
  api: BranchgraphApi;
  typedQuery?: (a: { branch: string; document: string; variables?: Record<string, unknown> }, signal?: AbortSignal) => Promise<unknown>;
  /** The SDL of a branch's typed GraphQL API. */
  branchSdl?: (branch: string, signal?: AbortSignal) => Promise<string>;
  /** The branch whose stored queries are tools (main by default). */
  branch?: string;
}

/** The prefix of a stored query's tool name: `query_<name>`. */
export const STORED_TOOL_PREFIX = 'query_';

/**
 * The stored queries of the endpoint's branch, as tools: each one's description is the query's,
 * its input schema the JSON Schema of its variables (derived from the document's variable types
 * against the branch's typed schema), so a branch that changes a query changes its tool. A query
 * no longer valid on the branch is left out; a mutation needs the write role.
 */
export async function storedQueryTools(ports: ToolPorts, signal?: AbortSignal): Promise<McpTool[]> {
  const branch = ports.branch ?? 'main';
  const listed = await ports.api.listStoredQueries({ branch }, signal === undefined ? {} : { signal });
  return listed.queries
    .filter((q) => q.operation !== null)
    .map((q) => {
      const reads = q.operation === 'query';
      return {
        name: `${STORED_TOOL_PREFIX}${q.name}`,
        description: `${q.description === '' ? `The stored query ${q.name}.` : q.description} (A stored ${q.operation} on branch ${branch}; its arguments are the document's variables. Answers data and errors, as GraphQL does.)`,
        inputSchema: { ...(q.inputSchema as Json), type: 'object' as const },
        outputSchema: {
          type: 'object' as const,
          properties: {
            data: { type: ['object', 'null'], additionalProperties: true },
            errors: { type: 'array', items: { type: 'object' } },
          },
        },
        annotations: { readOnlyHint: reads, destructiveHint: !reads, idempotentHint: reads, openWorldHint: false as const },
        role: reads ? ('read' as const) : ('write' as const),
        available: () => true,
        call: (p: ToolPorts, args: Record<string, unknown>, sig?: AbortSignal) =>
          p.api.runStoredQuery({ branch, name: q.name, variables: args }, sig === undefined ? {} : { signal: sig }),
      };
    });
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Json & { type: 'object' };
  outputSchema: Json & { type: 'object' };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: false };
  /** The role a caller needs to see and call it. */
  role: Role;
  /** Whether the transport can run it. */
  available(ports: ToolPorts): boolean;
  call(ports: ToolPorts, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
}

/** Every tool: the schema of a ref, the table's, in table order, then the typed GraphQL query. */
export function mcpTools(ops: readonly Operation[] = OPERATION_LIST): McpTool[] {
  const tools = [schemaTool(), ...ops.flatMap((op) => (op.mcp ?? []).map((binding) => toolOf(op, binding))), QUERY_TOOL];
  const names = tools.map((t) => t.name);
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length > 0) throw new Error(`two MCP tools are named ${twice.join(', ')}`);
  return tools;
}

function toolOf(op: Operation, binding: McpBinding): McpTool {
  const readOnly = op.http.method === 'GET' || binding.fixed?.dryRun === true;
  return {
    name: binding.tool,
    description: binding.description,
    inputSchema: inputSchemaOf(op, binding),
    outputSchema: objectSchema(z.toJSONSchema(op.output, { io: 'output', unrepresentable: 'any' }) as Json),
    annotations: {
      readOnlyHint: readOnly,
      destructiveHint: !readOnly && binding.destructive === true,
      idempotentHint: readOnly || binding.idempotent === true,
      openWorldHint: false,
    },
    role: op.role,
    available: () => true,
    call: (ports, args, signal) => {
      const run = (ports.api as unknown as Record<string, (i: unknown, c: { signal?: AbortSignal }) => Promise<unknown>>)[op.name];
      return (run as NonNullable<typeof run>)({ ...binding.defaults, ...args, ...binding.fixed }, signal === undefined ? {} : { signal });
    },
  };
}

/**
 * `schema`: what a model reads first, in one call: the schema of a ref as text (getSchema), every
 * table with its kind, key, ends and row counts (listTables), and, for a branch, the SDL of its
 * typed GraphQL API, which `query` runs documents on. Its input and output schemas are those two
 * operations' contracts.
 */
function schemaTool(): McpTool {
  const json = (s: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Json;
  const text = (json(OPERATIONS.getSchema.output, 'output').properties as Json).text;
  const tables = (json(OPERATIONS.listTables.output, 'output').properties as Json).tables;
  return {
    name: 'schema',
    description:
      "Read this first. The graph's schema at a ref (a branch name, tag:NAME or commit:ID; main by default): the schema text (node and edge types, keys, properties and constraints), every table with its kind, key, an edge's from and to node tables and its stored row count, and, for a branch, the SDL of its typed GraphQL API (the types and fields the query tool takes). The schema-language resource explains the text.",
    inputSchema: objectSchema(json(OPERATIONS.listTables.input, 'input')),
    outputSchema: {
      type: 'object',
      properties: {
        commit: { type: 'string', description: 'The commit the ref resolved to.' },
        text,
        tables,
        sdl: { type: ['string', 'null'], description: "The branch's typed GraphQL SDL; null for a ref that is not a branch." },
      },
      required: ['commit', 'text', 'tables', 'sdl'],
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    role: 'read',
    available: () => true,
    call: async (ports, args, signal) => {
      const at = (args as { at?: string }).at ?? 'main';
      const call = signal === undefined ? {} : { signal };
      const [schema, listed] = await Promise.all([ports.api.getSchema({ at }, call), ports.api.listTables({ at }, call)]);
      const branch = typeof at === 'string' && /^[^~^@:]+$/.test(at) && ports.branchSdl !== undefined;
      const sdl = branch ? await (ports.branchSdl as NonNullable<ToolPorts['branchSdl']>)(at, signal).catch(() => null) : null;
      return { commit: schema.commit, text: schema.text, tables: listed.tables, sdl };
    },
  };
}

/**
 * `query`: a document on a branch's typed GraphQL API (the types its schema generates, with
 * filters, ordering, pages and nested edges), answered as GraphQL answers: `data` and `errors`.
 * Mutations need the write role; the endpoint checks each field.
 */
const QUERY_TOOL: McpTool = {
  name: 'query',
  description:
    "Run a GraphQL document on a branch's typed API: one query type per table, with typed filters (`where`), ordering, pages (`first`, `after`) and nested edges in both directions; mutations insert, update and delete. Read the branch's SDL resource (or `schema`) for the type and field names. Answers `data` and any `errors`, as GraphQL does.",
  inputSchema: {
    type: 'object',
    properties: {
      branch: { type: 'string', minLength: 1, maxLength: 200, description: 'The branch whose typed API runs the document.' },
      document: { type: 'string', minLength: 1, maxLength: 100_000, description: 'A GraphQL query or mutation.' },
      variables: { type: 'object', additionalProperties: true, description: "The document's variables." },
    },
    required: ['branch', 'document'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { data: { type: ['object', 'null'], additionalProperties: true }, errors: { type: 'array', items: { type: 'object' } } },
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  role: 'read',
  available: (ports) => ports.typedQuery !== undefined,
  call: async (ports, args, signal) => {
    const { branch, document, variables } = args as { branch: string; document: string; variables?: Record<string, unknown> };
    const run = ports.typedQuery as NonNullable<ToolPorts['typedQuery']>;
    const answer = (await run({ branch, document, ...(variables !== undefined ? { variables } : {}) }, signal)) as {
      error?: ErrorBody;
    };
    // A refusal before any GraphQL ran (an unknown branch, a role) comes in the REST envelope: it is the tool's refusal.
    if (answer.error !== undefined) throw errorFromBody(answer.error, answer.error.message);
    return answer;
  },
};

/** The input contract less the fields the tool fixes; a default the tool applies is said in the field's description. */
function inputSchemaOf(op: Operation, binding: McpBinding): Json & { type: 'object' } {
  const schema = objectSchema(z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as Json);
  const fixed = new Set(Object.keys(binding.fixed ?? {}));
  const properties = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Record<string, Json>)
      .filter(([name]) => !fixed.has(name))
      .map(([name, s]) => {
        const d = binding.defaults?.[name];
        return [name, d === undefined ? s : { ...s, default: d }];
      }),
  );
  const { required: all = [], ...rest } = schema as Json & { required?: string[] };
  const required = all.filter((name) => name in properties);
  return { ...rest, type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** MCP asks for an object schema at the top: a union of objects, or a reference to one, says so beside its own keywords. */
function objectSchema(s: Json): Json & { type: 'object' } {
  const { $schema: _, ...rest } = s;
  return { ...rest, type: 'object' };
}
