/**
 * `branchgraph mcp`: the MCP server over stdio, for an agent that spawns
 * it. On the store it is given (`--store DIR|s3://…`, embedded, with every
 * tool), or against a running server (`--server URL --token T`, where the
 * server holds the token to its role). Standard output carries only the
 * protocol; it runs until the client closes standard input.
 */
import type { Command } from 'commander';
import { errorFromBody, type ErrorBody } from '../../model/errors.js';
import type { ToolPorts } from '../../mcp/mcp-tools.js';
import { embeddedService, serverApi, serverBase } from '../engine-access.js';
import type { CliContext, Globals } from '../cli-context.js';

export function mcpCommands(program: Command, cli: CliContext): void {
  cli
    .command(program, 'mcp', 'serve MCP over stdio: on --store (embedded), or on --server URL with --token')
    .option('--branch <name>', 'the branch whose stored queries are tools (default main)')
    .action(async (o: { branch?: string }, cmd: Command) => {
      const [{ StdioServerTransport }, { mcpServer }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('../../mcp/mcp-server.js'),
      ]);
      const { ports: base, close } = await portsOf(cli.globals(cmd));
      const ports = o.branch === undefined ? base : { ...base, branch: o.branch };
      // Embedded, the caller owns the store; against a server, the server holds the token to its role.
      const server = mcpServer({ ports, role: 'admin' });
      const closed = new Promise<void>((resolve) => {
        server.onclose = () => resolve();
      });
      await server.connect(new StdioServerTransport());
      await closed;
      await close();
    });
}

/** The API and the typed GraphQL of the store in this process, or of the server named. */
async function portsOf(g: Globals): Promise<{ ports: ToolPorts; close: () => Promise<void> }> {
  if (g.server !== undefined) {
    const base = serverBase(g.server);
    const { postGraphql } = await import('../../http/graphql-client.js');
    const typedQuery: ToolPorts['typedQuery'] = (q, signal) =>
      postGraphql(`${base}/branches/${encodeURIComponent(q.branch)}/graphql`, {
        document: q.document,
        variables: q.variables,
        token: g.token,
        signal,
      });
    const branchSdl: ToolPorts['branchSdl'] = async (branch, signal) => {
      const res = await fetch(`${base}/branches/${encodeURIComponent(branch)}/schema.graphql`, {
        headers: g.token !== undefined ? { authorization: `Bearer ${g.token}` } : {},
        ...(signal !== undefined ? { signal } : {}),
      });
      const text = await res.text();
      if (res.ok) return text;
      let envelope: ErrorBody | undefined;
      try {
        envelope = (JSON.parse(text) as { error?: ErrorBody }).error;
      } catch {
        envelope = undefined;
      }
      throw errorFromBody(envelope, `the SDL of ${branch}: HTTP ${res.status}`, { status: res.status });
    };
    return { ports: { api: await serverApi(base, g.token), typedQuery, branchSdl }, close: async () => {} };
  }
  const service = await embeddedService(g);
  const { embeddedApi } = await import('../../service/api.js');
  const ctx = { transport: 'cli' as const };
  const { embeddedTypedGraphql, embeddedTypedSdl } = await import('../../http/typed-graphql-endpoint.js');
  const typed = embeddedTypedGraphql(service, ctx);
  const sdl = embeddedTypedSdl(service);
  return {
    ports: {
      api: embeddedApi(service, ctx),
      typedQuery: (q) => typed(q.branch, q.document, { variables: q.variables }),
      branchSdl: (branch) => sdl(branch, ctx),
    },
    close: () => service.close(),
  };
}
