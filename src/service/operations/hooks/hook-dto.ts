import { hookView, type Hook, type HookView } from '../../../model/hook.js';
import type { HookStats } from '../../hook-dispatcher.js';
import type { BranchgraphService } from '../../service.js';

/** A hook as an admin sees it: everything but its secret, with this server's delivery counts. */
export type HookDto = HookView & { stats: HookStats };

export function hookDto(service: BranchgraphService, hook: Hook): HookDto {
  return { ...hookView(hook), stats: service.hooks.statsOf(hook.id) };
}
