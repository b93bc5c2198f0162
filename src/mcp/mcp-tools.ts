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
import type { McpBinding, Operation } from '../service/operation.js';
import { OPERATION_LIST } from '../service/operation-table.js';

type Json = Record<string, unknown>;

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Json & { type: 'object' };
  outputSchema: Json & { type: 'object' };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: false };
  op: Operation;
  binding: McpBinding;
}

/** Every tool of the table, in table order. */
export function mcpTools(ops: readonly Operation[] = OPERATION_LIST): McpTool[] {
  const tools = ops.flatMap((op) => (op.mcp ?? []).map((binding) => toolOf(op, binding)));
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
    op,
    binding,
  };
}

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
