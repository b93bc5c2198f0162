/**
 * `clone SRC DST`: copy a graph from one store to another (a directory or
 * `s3://bucket/prefix`, either way), resumable, refs last (graph/clone.ts).
 * Progress goes to standard error: a line each 10,000 objects, and the
 * total at the end.
 */
import type { Command } from 'commander';
import { BranchgraphError } from '../../model/errors.js';
import { cloneGraph } from '../../graph/clone.js';
import { openStore } from '../../store/open-store.js';
import type { ObjectStore } from '../../store/object-store.js';
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
    .action(async (src: string, dst: string, o: { width?: string }, cmd: Command) => {
      const [source, destination] = await Promise.all([storeAt(src), storeAt(dst)]);
      const width = intOption('--width', o.width);
      let shown = 0;
      try {
        const report = await cloneGraph({
          source,
          destination,
          ...(width !== undefined ? { width } : {}),
          progress: (p) => {
            if (p.objects - shown < 10_000) return;
            shown = p.objects;
            cli.io.stderr(`clone: ${p.objects.toLocaleString('en-US')} objects, ${(p.bytes / 2 ** 20).toFixed(1)} MiB (${p.prefix})\n`);
          },
        });
        print(cli.outOf(cmd), { source: src, destination: dst, ...report });
      } finally {
        await Promise.all([source.close?.(), destination.close?.()]);
      }
    });
}

async function storeAt(url: string): Promise<ObjectStore> {
  if (/^https?:\/\//i.test(url))
    throw new BranchgraphError(
      'invalid_input',
      `${url}: clone copies between stores, a directory (a path or file://) or s3://bucket/prefix`,
    );
  return openStore(url);
}
