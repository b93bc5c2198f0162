import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { EVENT_KINDS } from '../../../graph/event-log.js';
import { BranchgraphError } from '../../../model/errors.js';
import { CHECK_NAME_RE, HOOK_KINDS, hookUrlProblem } from '../../../model/hook.js';
import { defineOperation } from '../../operation.js';
import { hookDto, type HookDto } from './hook-dto.js';
import { HookZ } from '../../results/hook.js';

/**
 * Register a webhook (admin): an `event` hook receives the events it names, signed; a `check` hook
 * is asked to pass or fail each new merge request revision, and a protected branch can require its
 * check. The URL's host must be on the server's allowlist. The secret (given, or made here) is
 * returned once and never shown again.
 */
export const createHook = defineOperation({
  name: 'createHook',
  summary: 'Register a webhook or a pre-merge check (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z
    .object({
      url: z.string().min(1).max(2000),
      kind: z.enum(HOOK_KINDS).optional(),
      events: z
        .array(z.enum([...EVENT_KINDS, '*']))
        .max(EVENT_KINDS.length + 1)
        .optional(),
      check: z.string().regex(CHECK_NAME_RE, 'a check name: letters, digits, ., _ and -').optional(),
      secret: z.string().min(16, 'at least 16 characters').max(200).optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<HookDto & { secret: string }> {
    const kind = input.kind ?? 'event';
    const problem = hookUrlProblem(input.url, service.hooks.settings.allowlist);
    if (problem !== undefined)
      throw new BranchgraphError(problem.reason === 'host' ? 'forbidden' : 'invalid_input', `hook URL ${problem.message}`, {
        issues: [{ path: 'url', message: problem.message }],
      });
    if (kind === 'event' && (input.events === undefined || input.events.length === 0))
      throw new BranchgraphError('invalid_input', 'an event hook names the events it receives (or "*")', {
        issues: [{ path: 'events', message: 'required for an event hook' }],
      });
    if (kind === 'check' && input.check === undefined)
      throw new BranchgraphError('invalid_input', 'a check hook names its check, as protection rules require it', {
        issues: [{ path: 'check', message: 'required for a check hook' }],
      });
    if (kind === 'check' && input.events !== undefined)
      throw new BranchgraphError('invalid_input', 'a check hook is asked about revisions, not sent events', {
        issues: [{ path: 'events', message: 'only for event hooks' }],
      });
    const secret = input.secret ?? randomBytes(24).toString('base64url');
    const hook = await service.graph.hooks.create(
      {
        kind,
        url: input.url,
        events: kind === 'event' ? [...new Set(input.events)] : [],
        ...(input.check !== undefined && kind === 'check' ? { check: input.check } : {}),
        secret,
        createdBy: ctx.actor ?? service.graph.actor,
        createdAt: new Date(service.graph.clock()).toISOString(),
      },
      ctx.signal,
    );
    return { ...hookDto(service, hook), secret };
  },
  output: HookZ.extend({ secret: z.string().describe('The signing secret: shown here once, never again.') }),
  http: { method: 'POST', path: '/hooks', status: 201 },
  graphql: [{ type: 'Mutation', field: 'createHook' }],
});
