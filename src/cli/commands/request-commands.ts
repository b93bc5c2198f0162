/** `branchgraph request open|list|show|revise|review|resolve|check|merge|close`: merge requests a team reviews. */
import type { Command } from 'commander';
import { BranchgraphError } from '../../model/errors.js';
import type { Verdict } from '../../model/merge-request.js';
import { human, print } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { defined, intOption, resolutionsOf } from '../cli-inputs.js';

export function requestCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  const request = command(program, 'request', 'merge requests: open, review and merge changes into a (protected) branch');
  command(request, 'open', 'open a merge request of a branch into another (main by default)')
    .argument('<source>')
    .option('--into <branch>', 'the target branch (default main)')
    .requiredOption('--title <text>', 'what the change is')
    .option('--description <text>', 'why, for the reviewers')
    .action(async (source: string, o: { into?: string; title: string; description?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).openMergeRequest(
        defined({ source, target: o.into, title: o.title, description: o.description }),
      );
      print(outOf(cmd), r, human.request);
    });
  command(request, 'list', 'merge requests, newest first')
    .option('--state <state>', 'open (default), merged, closed or all')
    .option('--limit <n>', 'requests per page, at most 100')
    .option('--cursor <cursor>', 'the page after a previous one')
    .action(async (o: { state?: string; limit?: string; cursor?: string }, cmd: Command) => {
      const state = o.state as 'open' | 'merged' | 'closed' | 'all' | undefined;
      const page = await (await connect(cmd)).listMergeRequests(defined({ state, limit: intOption('--limit', o.limit), cursor: o.cursor }));
      print(outOf(cmd), page, human.requests);
    });
  command(request, 'show', 'one request: revisions, reviews, and whether it can merge')
    .argument('<id>')
    .action(async (id: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).getMergeRequest({ id }), human.request));
  command(request, 'revise', 'revise a request to the branches as they are now')
    .argument('<id>')
    .action(async (id: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).reviseMergeRequest({ id }), human.request),
    );
  command(request, 'review', 'approve, request changes or comment, on the current revision')
    .argument('<id>')
    .option('--approve', 'approve the change')
    .option('--request-changes', 'ask for changes before it merges')
    .option('--body <text>', 'what you say')
    .action(async (id: string, o: { approve?: boolean; requestChanges?: boolean; body?: string }, cmd: Command) => {
      if (o.approve && o.requestChanges) throw new BranchgraphError('invalid_input', 'give --approve or --request-changes, not both');
      const verdict: Verdict = o.approve ? 'approve' : o.requestChanges ? 'request_changes' : 'comment';
      print(outOf(cmd), await (await connect(cmd)).reviewMergeRequest(defined({ id, verdict, body: o.body })), human.request);
    });
  command(request, 'resolve', 'save the resolutions the merge will apply (none given: remove them)')
    .argument('<id>')
    .option('--strategy <s>', 'source-wins or target-wins, for every conflict no choice names')
    .option('--resolutions <file>', 'conflict choices (JSON: an array, or {"conflicts": [...]})')
    .action(async (id: string, o: { strategy?: string; resolutions?: string }, cmd: Command) => {
      const resolutions = resolutionsOf(o.strategy, o.resolutions) ?? null;
      print(outOf(cmd), await (await connect(cmd)).setMergeRequestResolutions({ id, resolutions: resolutions as never }), human.request);
    });
  command(request, 'merge', 'merge a request that can merge')
    .argument('<id>')
    .option('--message <text>', 'the merge commit message')
    .option('--delete-branch', 'delete the source branch after merging')
    .action(async (id: string, o: { message?: string; deleteBranch?: boolean }, cmd: Command) => {
      const r = await (await connect(cmd)).mergeMergeRequest(defined({ id, message: o.message, deleteBranch: o.deleteBranch }));
      print(outOf(cmd), r, (x: typeof r) => `${human.merge(x.result)}${human.request(x.request)}`);
    });
  command(request, 'check', 'run the pre-merge checks on the latest revision again, and wait for them')
    .argument('<id>')
    .action(async (id: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).runMergeRequestChecks({ id }), human.request),
    );
  command(request, 'close', 'close a request without merging')
    .argument('<id>')
    .action(async (id: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).closeMergeRequest({ id }), human.request));
}
