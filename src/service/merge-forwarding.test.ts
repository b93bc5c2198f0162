import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import type { BranchPublisher, BranchPublishers } from '../graph/branch-publishers.js';
import { GONE_MS, MergeForwarding, RECORD_TTL_MS, routeFor, type MergeForwarder } from './merge-forwarding.js';
import type { RequestContext } from './request-context.js';

const me = { id: 'a', incarnation: 'a1' };
const other: BranchPublisher = { branch: 'main', writer: { id: 'b', incarnation: 'b1' }, url: 'http://b.example' };
const http: RequestContext = { transport: 'http' };

describe('routeFor', () => {
  it('claims a branch with no record, or whose publisher is gone; runs here when the record names this process', () => {
    expect(routeFor({ record: undefined, me, gone: () => false })).toBe('claim');
    expect(routeFor({ record: other, me, gone: () => true })).toBe('claim');
    expect(routeFor({ record: { ...other, writer: me }, me, gone: () => false })).toBe('here');
    // This server's own earlier life (its shard, another incarnation) is gone: claimed again.
    expect(routeFor({ record: { ...other, writer: { id: 'a', incarnation: 'a0' } }, me, gone: () => false })).toBe('claim');
    expect(routeFor({ record: other, me, gone: () => false })).toEqual({ forward: other });
  });
});

/** Records in memory, counting reads and claims. */
function publishers(start: BranchPublisher | undefined) {
  let record = start;
  const calls = { reads: 0, claims: [] as BranchPublisher[] };
  const store = {
    read: async () => {
      calls.reads++;
      return record;
    },
    claim: async (p: BranchPublisher, o: { over: boolean }) => {
      if (!o.over && record !== undefined) return false;
      calls.claims.push(p);
      record = p;
      return true;
    },
  } as unknown as BranchPublishers;
  return {
    store,
    calls,
    set: (p: BranchPublisher | undefined) => {
      record = p;
    },
  };
}

describe('MergeForwarding', () => {
  const forwarder = (answer: () => Promise<unknown>): MergeForwarder => ({ forward: answer as MergeForwarder['forward'] });

  it('forwards HTTP merges to the recorded publisher, and runs the others here', async () => {
    const p = publishers(other);
    const f = new MergeForwarding({ publishers: p.store, me, setup: { url: 'http://a.example', forwarder: forwarder(async () => 'x') } });
    expect(await f.route('main', http)).toEqual({ forward: other });
    expect(await f.route('main', { transport: 'embedded' })).toBe('here');
    expect(await f.route('main', { ...http, forwarded: true })).toBe('here');
    expect(p.calls.claims).toEqual([]);
  });

  it('claims an unclaimed branch create-only: of two claiming at once, the loser forwards to the winner', async () => {
    const p = publishers(undefined);
    const f = new MergeForwarding({ publishers: p.store, me, setup: { url: 'http://a.example', forwarder: forwarder(async () => 'x') } });
    // The other server's claim lands between this one's read and its claim.
    const read = p.store.read.bind(p.store);
    let first = true;
    (p.store as { read: BranchPublishers['read'] }).read = async (branch) => {
      const r = await read(branch);
      if (first) p.set(other);
      first = false;
      return r;
    };
    expect(await f.route('main', http)).toEqual({ forward: other });
    expect(p.calls.claims).toEqual([]);
    // Unclaimed and uncontested: claimed here.
    const q = publishers(undefined);
    const g = new MergeForwarding({ publishers: q.store, me, setup: { url: 'http://a.example', forwarder: forwarder(async () => 'x') } });
    expect(await g.route('main', http)).toBe('here');
    expect(q.calls.claims).toEqual([{ branch: 'main', writer: me, url: 'http://a.example' }]);
  });

  it('reads a record again only once RECORD_TTL_MS passed', async () => {
    let now = 0;
    const p = publishers(other);
    const f = new MergeForwarding({
      publishers: p.store,
      me,
      setup: { url: 'http://a.example', forwarder: forwarder(async () => 'x') },
      now: () => now,
    });
    await f.route('main', http);
    await f.route('main', http);
    expect(p.calls.reads).toBe(1);
    p.set({ ...other, writer: me });
    now += RECORD_TTL_MS + 1;
    expect(await f.route('main', http)).toBe('here');
    expect(p.calls.reads).toBe(2);
  });

  it('a publisher that cannot be connected to is gone: the branch is claimed here and the merge runs here', async () => {
    let now = 0;
    const p = publishers(other);
    const refused = new BranchgraphError('server_unreachable', 'refused', { details: { url: other.url, sent: false } });
    const f = new MergeForwarding({
      publishers: p.store,
      me,
      setup: { url: 'http://a.example', forwarder: forwarder(async () => Promise.reject(refused)) },
      now: () => now,
    });
    expect(await f.forward({ branch: 'main', to: other, input: {}, ctx: http })).toBeUndefined();
    expect(p.calls.claims).toEqual([{ branch: 'main', writer: me, url: 'http://a.example' }]);
    expect(await f.route('main', http)).toBe('here');
    // Another claim naming the gone process is not believed until GONE_MS passed.
    p.set(other);
    now += RECORD_TTL_MS + 1;
    expect(await f.route('main', http)).toBe('here');
    now += GONE_MS;
    p.set(other);
    expect(await f.route('main', http)).toEqual({ forward: other });
  });

  it('a publisher that stopped answering after the merge was sent: publisher_unreachable, nothing claimed', async () => {
    const p = publishers(other);
    const broken = new BranchgraphError('server_unreachable', 'reset', { details: { url: other.url, sent: true } });
    const f = new MergeForwarding({
      publishers: p.store,
      me,
      setup: { url: 'http://a.example', forwarder: forwarder(async () => Promise.reject(broken)) },
    });
    await expect(f.forward({ branch: 'main', to: other, input: {}, ctx: http })).rejects.toMatchObject({
      code: 'publisher_unreachable',
      retryable: true,
      details: { branch: 'main', url: other.url },
    });
    expect(p.calls.claims).toEqual([]);
  });

  it("relays the publisher's own refusals as they are", async () => {
    const p = publishers(other);
    const conflict = new BranchgraphError('branch_protected', 'protected');
    const f = new MergeForwarding({
      publishers: p.store,
      me,
      setup: { url: 'http://a.example', forwarder: forwarder(async () => Promise.reject(conflict)) },
    });
    await expect(f.forward({ branch: 'main', to: other, input: {}, ctx: http })).rejects.toBe(conflict);
  });
});
