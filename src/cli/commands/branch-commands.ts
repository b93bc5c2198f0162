/** `branchgraph branch list|create|reset|protect|unprotect|delete` and `branchgraph tag list|create|delete`. */
import type { Command } from 'commander';
import type { BranchDto } from '../../service/dtos.js';
import { human, print } from '../cli-output.js';
import { AT_HELP, type CliContext } from '../cli-context.js';
import { defined, intOption } from '../cli-inputs.js';

export function branchCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf, io } = cli;
  const branch = command(program, 'branch', 'list, create, reset and delete branches');
  command(branch, 'list', 'branches by name with their heads, one page at a time')
    .option('--limit <n>', 'branches per page, 1-1000 (default 100)')
    .option('--cursor <cursor>', 'the page after a previous one (its next cursor)')
    .option('--all', 'every page, one after the other')
    .action(async (o: { limit?: string; cursor?: string; all?: boolean }, cmd: Command) => {
      const api = await connect(cmd);
      const limit = intOption('--limit', o.limit);
      const out: BranchDto[] = [];
      let cursor: string | null | undefined = o.cursor;
      do {
        const page = await api.listBranches(defined({ limit, cursor: cursor ?? undefined }));
        for (const d of page.damaged) io.stderr(`warning: branch ${d.name} cannot be read (${d.key}): ${d.error}\n`);
        out.push(...page.branches);
        cursor = page.nextCursor;
      } while (o.all === true && cursor !== null);
      print(outOf(cmd), out, human.branches);
      if (o.all !== true && cursor !== null && cursor !== undefined) io.stderr(`more branches follow: --cursor ${cursor}\n`);
    });
  command(branch, 'create', 'create a branch; it shares its parent data and copies nothing')
    .argument('<name>')
    .option('--from <ref>', 'branch, commit:<id> or tag:<name> to start from (default main)')
    .action(async (name: string, o: { from?: string }, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).createBranch(defined({ name, from: o.from })), human.branch),
    );
  command(branch, 'reset', 'move a branch to any commit (admin), if its head is still the one expected')
    .argument('<name>')
    .requiredOption('--to <ref>', 'where the branch goes: any ref (main~3, commit:<id>, main@{<time>})')
    .requiredOption('--expected-head <id>', 'the commit the branch must be at now')
    .action(async (name: string, o: { to: string; expectedHead: string }, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).resetBranch({ name, to: o.to, expectedHead: o.expectedHead }), human.branch),
    );
  command(branch, 'protect', 'protect a branch (admin): changes land only through approved merge requests')
    .argument('<name>')
    .option('--approvals <n>', 'current approvals a request needs, none by its author (default 1)')
    .option('--allow-admin-bypass', 'let an admin land a change anyway (--bypass-protection), recorded on the commit')
    .option('--stale-on <when>', 'when an approval stops counting: result_change (default) or head_move')
    .option('--checks <names>', 'checks that must pass on the revision a request merges, comma-separated')
    .action(
      async (name: string, o: { approvals?: string; allowAdminBypass?: boolean; staleOn?: string; checks?: string }, cmd: Command) => {
        const rule = defined({
          name,
          requiredApprovals: intOption('--approvals', o.approvals),
          requiredChecks: o.checks
            ?.split(',')
            .map((c) => c.trim())
            .filter((c) => c !== ''),
          allowAdminBypass: o.allowAdminBypass,
          staleApprovals: o.staleOn as 'result_change' | 'head_move' | undefined,
        });
        print(outOf(cmd), await (await connect(cmd)).protectBranch(rule), human.branch);
      },
    );
  command(branch, 'unprotect', "remove a branch's protection (admin)")
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).unprotectBranch({ name }), human.branch),
    );
  command(branch, 'delete', 'delete a branch (never main); its commits stay readable until GC')
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).deleteBranch({ name }), (r: { deleted: string }) => `deleted branch ${r.deleted}\n`),
    );

  const tag = command(program, 'tag', 'list, create and delete tags: immutable names for commits, usable as tag:NAME wherever a ref is');
  command(tag, 'list', 'every tag with its commit').action(async (_o, cmd: Command) =>
    print(outOf(cmd), (await (await connect(cmd)).listTags({})).tags, human.tags),
  );
  command(tag, 'create', 'name the commit a ref resolves to; tags never move')
    .argument('<name>')
    .option('--from <ref>', AT_HELP)
    .option('--message <text>', 'what the tag marks')
    .action(async (name: string, o: { from?: string; message?: string }, cmd: Command) =>
      print(
        outOf(cmd),
        await (await connect(cmd)).createTag(defined({ name, from: o.from, message: o.message })),
        (t: { name: string; commit: string }) => `tag ${t.name} at ${t.commit}\n`,
      ),
    );
  command(tag, 'delete', 'remove a tag (admin); its commits stay while anything else reaches them')
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).deleteTag({ name }), (r: { deleted: string }) => `deleted tag ${r.deleted}\n`),
    );
}
