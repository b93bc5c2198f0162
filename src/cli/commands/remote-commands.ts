/**
 * Sync between copies of a graph: `clone SRC DST`, `remote add|list|remove`,
 * `fetch [REMOTE]`, `push REMOTE BRANCH[:DEST]` and `pull REMOTE BRANCH`.
 * Each runs where the other commands do (the embedded store, or the server
 * with --server); a server's remotes are its own. `pull` is `fetch` and then
 * a merge of `remote:REMOTE/BRANCH`, answered as `merge` answers (exit 3 on
 * conflicts, nothing changed). Progress goes to standard error.
 */
import type { Command } from 'commander';
import { cloneStores } from '../../service/clone-stores.js';
import { parseInput } from '../../service/parse-input.js';
import { OPERATIONS } from '../../service/operation-table.js';
import { httpPeer } from '../../http/http-peer.js';
import { human, print } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { defined, intOption, resolutionsOf } from '../cli-inputs.js';
import { EXIT } from '../exit-codes.js';

export function remoteCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf, io, setExit } = cli;
  command(program, 'clone', 'copy a graph from a directory, s3://bucket/prefix or a server into an empty store; run again to resume')
    .argument('<source>', 'where the graph is: a directory, s3://bucket/prefix or http(s)://host:port[/graphs/NAME]')
    .argument('<destination>', 'an empty store, a directory or s3://bucket/prefix (or one an interrupted clone of the same source left)')
    .option('--width <n>', 'objects copied at once (default 8)')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (source: string, destination: string, o: { width?: string }, cmd: Command) => {
      let shown = 0;
      const g = cli.globals(cmd);
      const report = await cloneStores({
        source,
        destination,
        actor: g.actor ?? process.env.BRANCHGRAPH_ACTOR ?? 'cli',
        http: httpPeer,
        width: intOption('--width', o.width),
        progress: (p) => {
          if (p.objects - shown < 10_000 && p.objects !== p.total) return;
          shown = p.objects;
          io.stderr(
            `clone: ${p.objects.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')} objects, ${(p.bytes / 2 ** 20).toFixed(1)} MiB\n`,
          );
        },
      });
      print(
        outOf(cmd),
        { source, destination, ...report, updated: report.updated.map((u) => ({ ...u, from: u.from ?? null })) },
        human.clone,
      );
    });

  const remote = command(program, 'remote', "add, list and remove the graph's remotes");
  command(remote, 'add', 'add a remote, or point one at a new URL (admin)')
    .argument('<name>')
    .argument('<url>', 'a directory, s3://bucket/prefix or http(s)://host:port[/graphs/NAME]')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (name: string, url: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).setRemote({ name, url })));
  command(remote, 'list', 'every remote with its branches as last fetched').action(async (_o, cmd: Command) =>
    print(outOf(cmd), (await (await connect(cmd)).listRemotes({})).remotes, human.remotes),
  );
  command(remote, 'remove', 'remove a remote and its tracking refs (admin)')
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).deleteRemote({ name })));

  command(program, 'fetch', "fetch a remote's branches and tags; read them as remote:REMOTE/BRANCH")
    .argument('[remote]', 'the remote (default origin)', 'origin')
    .option('--prune', 'forget tracking refs of branches the remote no longer has')
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    .action(async (name: string, o: { prune?: boolean; progress?: boolean }, cmd: Command) => {
      const api = await connect(cmd);
      const start = (id: string | undefined) =>
        api.fetchRemote(defined({ remote: name, prune: o.prune }), id === undefined ? {} : { operationId: id });
      print(outOf(cmd), await cli.followed(cmd, { flag: o.progress, api, start }), human.fetch);
    });

  command(program, 'push', "push a branch to a remote: fast-forward only, unless --force-with-lease names the remote's head")
    .argument('<remote>')
    .argument('<branch>', 'BRANCH, or BRANCH:DEST to move another branch on the remote')
    .option('--force-with-lease <head>', "move the remote branch as long as its head is this commit ('' when it must not exist)")
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (name: string, spec: string, o: { forceWithLease?: string; progress?: boolean }, cmd: Command) => {
      const colon = spec.indexOf(':');
      const [branch, destination] = colon < 0 ? [spec, undefined] : [spec.slice(0, colon), spec.slice(colon + 1)];
      const api = await connect(cmd);
      const input = defined({ remote: name, branch, destination, forceWithLease: o.forceWithLease });
      const start = (id: string | undefined) => api.pushBranch(input, id === undefined ? {} : { operationId: id });
      print(outOf(cmd), await cli.followed(cmd, { flag: o.progress, api, start }), human.push);
    });

  command(program, 'pull', 'fetch a remote, then merge remote:REMOTE/BRANCH into a branch (exit 3 on conflicts, nothing changed)')
    .argument('<remote>')
    .argument('<branch>', "the remote's branch")
    .option('--into <branch>', 'the branch merged into (default: the same name)')
    .option('--dry-run', 'say what the merge would do; publish nothing')
    .option('--message <text>', 'commit message')
    .option('--strategy <strategy>', 'resolve every conflict no choice names: source-wins or target-wins')
    .option('--resolutions <file>', 'JSON file of conflict choices, as for merge')
    .action(
      // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
      async (
        name: string,
        branch: string,
        o: { into?: string; dryRun?: boolean; message?: string; strategy?: string; resolutions?: string },
        cmd: Command,
      ) => {
        const api = await connect(cmd);
        await api.fetchRemote({ remote: name });
        const fields = defined({
          source: `remote:${name}/${branch}`,
          into: o.into ?? branch,
          dryRun: o.dryRun,
          message: o.message,
          resolutions: resolutionsOf(o.strategy, o.resolutions),
        });
        const r = await api.mergeBranch(parseInput(OPERATIONS.mergeBranch.input, fields, 'flags'));
        print(outOf(cmd), r, human.merge);
        if (r.status !== 'success') setExit(EXIT.conflicts);
      },
    );
}
