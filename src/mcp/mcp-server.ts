/**
 * The MCP server: the tools of the operation table (mcp-tools.ts) over any
 * `BranchgraphApi`, the engine in this process or a server's REST client,
 * and `query` where the transport can run a branch's typed GraphQL.
 * `tools/list` shows only the tools the caller's role may call; a call
 * runs the operation with the tool's fixed fields and defaults, and
 * answers as mcp-answers.ts says. Every refusal, the role's included, is a
 * tool error with its code, never a protocol error: a model can read it
 * and act. An unknown tool is the protocol's own error.
 *
 * The transports hold no state between calls (a server per HTTP request
 * costs a few objects), so any replica answers any call.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { listResources, readResource, SDL_TEMPLATE } from './mcp-resources.js';
import { isMasked, toBranchgraphError } from '../model/errors.js';
import { requireRole, ROLES, type Role } from '../service/auth.js';
import { packageVersion } from '../service/package-root.js';
import { toolAnswer, toolRefusal, type ToolAnswer } from './mcp-answers.js';
import { mcpTools, STORED_TOOL_PREFIX, storedQueryTools, type McpTool, type ToolPorts } from './mcp-tools.js';

const INSTRUCTIONS = `branchgraph is a graph store (node and edge tables of keyed rows) with Git-style branches.
Work on a branch of your own: branch_create, then write; read with schema, tables, read_rows, get_row, diff, log and history.
To bring your work back: merge_preview shows the outcome and the exact conflicts; merge lands it as one commit (pass resolutions for conflicts and an idempotencyKey so a retry is safe).
A protected target takes changes only through a merge request: merge_request_open, then merge_request_get to follow it.
The resources explain the schema language and what a merge does, and give each branch's typed GraphQL SDL for the query tool.
Refs are a branch name, tag:NAME or commit:ID, optionally followed by ~N, ^N or @{time}.`;

let tools: McpTool[] | undefined;

/** A server for one caller: its API, and its role (what it may list and call). */
export function mcpServer(a: { ports: ToolPorts; role: Role }): Server {
  tools ??= mcpTools();
  const all = tools.filter((t) => t.available(a.ports));
  const allowed = all.filter((t) => ROLES.indexOf(a.role) >= ROLES.indexOf(t.role));
  const server = new Server(
    { name: 'branchgraph', version: packageVersion() },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListResourcesRequestSchema, async (_r, extra) => ({ resources: await listResources(a.ports, extra.signal) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates:
      a.ports.branchSdl === undefined
        ? []
        : [
            {
              uriTemplate: SDL_TEMPLATE,
              name: 'branch-sdl',
              title: "A branch's typed GraphQL SDL",
              description: 'The types and fields of the typed GraphQL API the query tool runs on, for one branch.',
              mimeType: 'text/plain',
            },
          ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    try {
      return { contents: [await readResource(request.params.uri, a.ports, extra.signal)] };
    } catch (e) {
      // A resource read has no tool-error form: the refusal is the protocol's error, carrying the stable code.
      const err = toBranchgraphError(e);
      throw new McpError(isMasked(err) ? ErrorCode.InternalError : ErrorCode.InvalidParams, `${err.code}: ${err.message}`, {
        code: err.code,
      });
    }
  });
  // The endpoint branch's stored queries are tools too, read afresh for each list and call.
  const stored = async (signal?: AbortSignal): Promise<McpTool[]> => storedQueryTools(a.ports, signal).catch(() => []);
  const mayCall = (t: McpTool) => ROLES.indexOf(a.role) >= ROLES.indexOf(t.role);
  server.setRequestHandler(ListToolsRequestSchema, async (_r, extra) => ({
    tools: [...allowed, ...(await stored(extra.signal)).filter(mayCall)].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<ToolAnswer> => {
    const name = request.params.name;
    const tool =
      all.find((t) => t.name === name) ??
      (name.startsWith(STORED_TOOL_PREFIX) ? (await stored(extra.signal)).find((t) => t.name === name) : undefined);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool ${request.params.name}: tools/list lists them`);
    try {
      requireRole(a.role, tool.role);
      return toolAnswer(await tool.call(a.ports, request.params.arguments ?? {}, extra.signal));
    } catch (e) {
      return toolRefusal(toBranchgraphError(e));
    }
  });
  return server;
}
