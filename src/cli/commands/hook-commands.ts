/** `branchgraph hook add|list|remove|dead-letters|redeliver`: webhooks and pre-merge checks (admin). */
import type { Command } from 'commander';
import { human, print } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { defined, intOption } from '../cli-inputs.js';

export function hookCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  const hook = command(program, 'hook', 'webhooks that receive signed events, and checks that gate merges (admin)');
  command(hook, 'add', 'register a webhook (--events) or a pre-merge check (--check); prints the secret once')
    .argument('<url>')
    .option('--events <kinds>', 'event kinds it receives, comma-separated, or * for all')
    .option('--check <name>', 'make it a check by this name, as branch protect --checks requires it')
    .option('--secret <text>', 'the signing key, at least 16 characters (default: made for you)')
    .action(async (url: string, o: { events?: string; check?: string; secret?: string }, cmd: Command) => {
      const events = o.events?.split(',').map((e) => e.trim()) as never;
      const made = await (await connect(cmd)).createHook(
        defined({ url, kind: o.check === undefined ? undefined : ('check' as const), events, check: o.check, secret: o.secret }),
      );
      print(outOf(cmd), made, (h: typeof made) => `${human.hooks({ hooks: [h] })}secret: ${h.secret}\n`);
    });
  command(hook, 'list', 'registered hooks with their delivery counts on that server').action(async (_o, cmd: Command) =>
    print(outOf(cmd), await (await connect(cmd)).listHooks({}), human.hooks),
  );
  command(hook, 'remove', 'remove a hook')
    .argument('<id>')
    .action(async (id: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).deleteHook({ id }), (r: { deleted: string }) => `removed hook ${r.deleted}\n`),
    );
  command(hook, 'redeliver', 'deliver a dead letter again, and remove it')
    .argument('<id>', 'the dead letter id')
    .action(async (id: string, _o, cmd: Command) =>
      print(
        outOf(cmd),
        await (await connect(cmd)).redeliverHookDeadLetter({ id }),
        (r: { redelivered: string; delivery: string }) => `queued delivery ${r.delivery} again (dead letter ${r.redelivered})
`,
      ),
    );
  command(hook, 'dead-letters', 'deliveries that never landed, oldest first, with why')
    .option('--limit <n>', 'at most this many, up to 1000')
    .option('--cursor <cursor>', 'the page after a previous one')
    .action(async (o: { limit?: string; cursor?: string }, cmd: Command) =>
      print(
        outOf(cmd),
        await (await connect(cmd)).listHookDeadLetters(defined({ limit: intOption('--limit', o.limit), cursor: o.cursor })),
        human.deadLetters,
      ),
    );
}
