/** `branchgraph merge`, `cherry-pick` and `revert`: one commit, or nothing and the exact conflicts (exit 3). */
import type { Command } from 'commander';
import { parseInput } from '../../service/parse-input.js';
import { OPERATIONS } from '../../service/operation-table.js';
import { human, print } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { defined, intOption, resolutionsOf } from '../cli-inputs.js';
import { EXIT } from '../exit-codes.js';

type MergeFlags = {
  into?: string;
  dryRun?: boolean;
  width?: string;
  deleteBranch?: boolean;
  message?: string;
  author?: string;
  strategy?: string;
  resolutions?: string;
  conflictLimit?: string;
  conflictCursor?: string;
  expectSourceHead?: string;
  expectTargetHead?: string;
  idempotencyKey?: string;
  progress?: boolean;
};

type ApplyFlags = Pick<
  MergeFlags,
  'dryRun' | 'message' | 'strategy' | 'resolutions' | 'conflictLimit' | 'conflictCursor' | 'expectTargetHead'
> & { onto?: string; on?: string };

export function mergeCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf, setExit } = cli;
  command(program, 'merge', 'merge SOURCE into a branch: one atomic commit, or nothing and the exact conflicts (exit 3)')
    .argument('<source>')
    .option('--into <branch>', 'target branch (default main)')
    .option('--dry-run', 'say what would happen; publish nothing')
    .option('--width <n>', 'tables prepared at once: 1, 2 or 4')
    .option('--delete-branch', 'delete SOURCE after a successful merge')
    .option('--message <text>', 'commit message')
    .option('--author <name>', 'who the commit is for')
    .option('--strategy <strategy>', 'resolve every conflict no choice names: source-wins or target-wins')
    .option('--conflict-limit <n>', 'conflicts per page of the report, at most 1000 (default 100)')
    .option('--conflict-cursor <cursor>', "the next page of a report: the previous report's next cursor")
    .option('--resolutions <file>', 'JSON file of conflict choices: [{"table","key","property"?,"take","value"?,"expected"?}, ...]')
    .option('--expect-source-head <commit>', 'refuse unless the source is at this commit (as previewed)')
    .option('--expect-target-head <commit>', 'refuse unless the target is at this commit (as previewed)')
    .option('--idempotency-key <key>', 'a retry with the same key returns the first result instead of merging again')
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    .action(async (source: string, o: MergeFlags, cmd: Command) => {
      const { strategy, resolutions: file, expectSourceHead, expectTargetHead, progress: flag, width, conflictLimit, ...rest } = o;
      const fields = {
        ...rest,
        source,
        width: width === undefined ? undefined : Number(width),
        conflictLimit: intOption('--conflict-limit', conflictLimit),
        resolutions: resolutionsOf(strategy, file),
        expectedSourceHead: expectSourceHead,
        expectedTargetHead: expectTargetHead,
      };
      const input = parseInput(OPERATIONS.mergeBranch.input, defined(fields), 'flags');
      const api = await connect(cmd);
      const r = await cli.followed(cmd, { flag, api, start: (id) => api.mergeBranch(input, id === undefined ? {} : { operationId: id }) });
      print(outOf(cmd), r, human.merge);
      if (r.status !== 'success') setExit(EXIT.conflicts);
    });

  for (const [name, op, on, what] of [
    ['cherry-pick', 'cherryPick', '--onto', "replay one commit's change on a branch as a new one-parent commit"],
    ['revert', 'revert', '--on', "undo one commit's change on a branch, keeping later changes"],
  ] as const) {
    command(program, name, `${what} (exit 3 on conflicts, resolvable as for merge)`)
      .argument('<commit>', 'the commit: an id, or any ref (commit:<prefix>, feature~2, main^2)')
      .option(`${on} <branch>`, 'the branch (default main)')
      .option('--dry-run', 'say what would happen; publish nothing')
      .option('--message <text>', 'commit message')
      .option('--strategy <strategy>', 'resolve every conflict no choice names: source-wins or target-wins')
      .option('--conflict-limit <n>', 'conflicts per page of the report, at most 1000 (default 100)')
      .option('--conflict-cursor <cursor>', "the next page of a report: the previous report's next cursor")
      .option('--resolutions <file>', 'JSON file of conflict choices, as for merge')
      .option('--expect-target-head <commit>', 'refuse unless the branch is at this commit (as previewed)')
      .action(async (commit: string, o: ApplyFlags, cmd: Command) => {
        const fields = {
          branch: o.onto ?? o.on ?? 'main',
          commit,
          dryRun: o.dryRun,
          message: o.message,
          expectedTargetHead: o.expectTargetHead,
          conflictLimit: intOption('--conflict-limit', o.conflictLimit),
          conflictCursor: o.conflictCursor,
          resolutions: resolutionsOf(o.strategy, o.resolutions),
        };
        // Checked here, so a bad flag fails before connecting; the ref goes on as text, as given.
        const input = { ...parseInput(OPERATIONS[op].input, defined(fields), 'flags'), commit };
        const r = await (await connect(cmd))[op](input);
        print(outOf(cmd), r, human.merge);
        if (r.status !== 'success') setExit(EXIT.conflicts);
      });
  }
}
