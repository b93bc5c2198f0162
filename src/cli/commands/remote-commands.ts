/**
 * `clone SRC DST`: copy a graph from one store to another (a directory or
 * `s3://bucket/prefix`, either way), resumable, refs last (graph/clone.ts).
 * Progress goes to standard error: a line each 10,000 objects.
 */
import type { Command } from 'commander';
import { cloneStores } from '../../service/clone-stores.js';
import { print } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { intOption } from '../cli-inputs.js';

export function remoteCommands(program: Command, cli: CliContext): void {
  cli
    .command(program, 'clone', 'copy a graph from one store to another (a directory or s3://bucket/prefix); run again to resume')
    .argument('<source>', 'the store the graph is in')
    .argument('<destination>', 'an empty store (or one an interrupted clone of the same graph left)')
    .option('--width <n>', 'objects copied at once (default 8)')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (source: string, destination: string, o: { width?: string }, cmd: Command) => {
      let shown = 0;
      const report = await cloneStores({
        source,
        destination,
        width: intOption('--width', o.width),
        progress: (p) => {
          if (p.objects - shown < 10_000) return;
          shown = p.objects;
          cli.io.stderr(`clone: ${p.objects.toLocaleString('en-US')} objects, ${(p.bytes / 2 ** 20).toFixed(1)} MiB (${p.prefix})\n`);
        },
      });
      print(cli.outOf(cmd), { source, destination, ...report });
    });
}
