/**
 * Merges forwarded to the server that publishes their target branch
 * (service/merge-forwarding.ts), over that server's REST API, as the caller:
 * with the caller's token and marked forwarded, so it runs there and is
 * never forwarded again.
 */
import type { MergeForwarder } from '../service/merge-forwarding.js';
import { FORWARDED_HEADER } from '../service/merge-forwarding.js';
import type { RequestContext } from '../service/request-context.js';
import { RestClient } from './rest-client.js';

export const httpMergeForwarder: MergeForwarder = {
  async forward<T>(a: { url: string; input: Record<string, unknown>; ctx: RequestContext }): Promise<T> {
    const client = new RestClient(a.url, a.ctx.bearer, { [FORWARDED_HEADER]: '1' });
    return (await client.mergeBranch(a.input as never, a.ctx.signal !== undefined ? { signal: a.ctx.signal } : {})) as T;
  },
};
