/**
 * `branchgraph mcp`: the MCP server over stdio, for an agent that spawns
 * it. On the store it is given (`--store DIR|s3://…`, embedded, with every
 * tool), or against a running server (`--server URL --token T`, where the
 * server holds the token to its role). Standard output carries only the
 * protocol; it runs until the client closes standard input.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';

export function mcpCommands(program: Command, cli: CliContext): void {
  cli
    .command(program, 'mcp', 'serve MCP over stdio: on --store (embedded), or on --server URL with --token')
    .action(async (_o: unknown, cmd: Command) => {
      const [{ StdioServerTransport }, { mcpServer }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('../../mcp/mcp-server.js'),
      ]);
      const api = await cli.connect(cmd);
      // Embedded, the caller owns the store; against a server, the server holds the token to its role.
      const server = mcpServer({ api, role: 'admin' });
      const closed = new Promise<void>((resolve) => {
        server.onclose = () => resolve();
      });
      await server.connect(new StdioServerTransport());
      await closed;
    });
}
