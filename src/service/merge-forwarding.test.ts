import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import type { BranchPublisher, BranchPublishers } from '../graph/branch-publishers.js';
import { GONE_MS, MergeForwarding, RECORD_TTL_MS, routeFor, type MergeForwarder } from './merge-forwarding.js';
import type { RequestContext } from './request-context.js';

const me = { id: 'a', incarnation: 'a1' };
const mine: BranchPublisher = { branch: 'main', writer: me, url: 'http://a.example' };
const other: BranchPublisher = { branch: 'main', writer: { id: 'b', incarnation: 'b1' }, url: 'http://b.example' };
const http: RequestContext = { transport: 'http' };

describe('routeFor', () => {
  it('runs here when the record names this process, forwards to another, and claims what nobody live holds', () => {
    const live = () => false;
    expect(routeFor({ record: undefined, me, gone: live })).toEqual({ claim: 'create' });
    expect(routeFor({ record: other, me, gone: () => true })).toEqual({ claim: 'over' });
    expect(routeFor({ record: mine, me, gone: live })).toBe('here');
    // This server's own earlier life (its shard, another incarnation) is gone: claimed again.
    expect(routeFor({ record: { ...other, writer: { id: 'a', incarnation: 'a0' } }, me, gone: live })).toEqual({ claim: 'over' });
    expect(routeFor({ record: other, me, gone: live })).toEqual({ forward: other });
  });
});

/** Records in memory: create-only claims fail when one exists; reads and claims counted. */
function records(start: BranchPublisher | undefined) {
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

/** A forwarding whose publisher answers `answer`, and a clock the test moves. */
function forwarding(start: BranchPublisher | undefined, answer: () => Promise<unknown> = async () => 'there') {
  const clock = { now: 0 };
  const r = records(start);
  const sent: string[] = [];
  const forwarder: MergeForwarder = {
    forward: (async (a: { url: string }) => {
      sent.push(a.url);
      return answer();
    }) as MergeForwarder['forward'],
  };
  const f = new MergeForwarding({ publishers: r.store, me, setup: { url: mine.url, forwarder }, now: () => clock.now });
  let ran = 0;
  const merge = (ctx: RequestContext = http, outcome: { published?: boolean; fail?: unknown } = {}) =>
    f.merge({
      branch: 'main',
      ctx,
      input: {},
      here: async () => {
        ran++;
        if (outcome.fail !== undefined) throw outcome.fail;
        return 'here';
      },
      published: () => outcome.published ?? true,
    });
  return { f, r, clock, sent, merge, ran: () => ran };
}

describe('MergeForwarding', () => {
  it("sends an HTTP merge to the branch's publisher, and runs embedded and forwarded ones here, claiming nothing", async () => {
    const t = forwarding(other);
    expect(await t.merge()).toBe('there');
    expect(t.sent).toEqual([other.url]);
    expect(await t.merge({ transport: 'embedded' })).toBe('here');
    expect(await t.merge({ ...http, forwarded: true })).toBe('here');
    expect(t.ran()).toBe(2);
    expect(t.r.calls.claims).toEqual([]);
  });

  it('claims an unclaimed branch create-only once a merge run here published, and never for one refused or unpublished', async () => {
    const t = forwarding(undefined);
    await expect(t.merge(http, { fail: new BranchgraphError('not_found', 'no such source') })).rejects.toMatchObject({ code: 'not_found' });
    expect(await t.merge(http, { published: false })).toBe('here');
    expect(t.r.calls.claims).toEqual([]);
    expect(await t.merge()).toBe('here');
    expect(t.r.calls.claims).toEqual([mine]);
  });

  it('of two servers claiming at once, the one that lost forwards to the winner from then on', async () => {
    const t = forwarding(undefined);
    // The other server's claim lands while this one's merge runs.
    await t.f.merge({ branch: 'main', ctx: http, input: {}, here: async () => (t.r.set(other), 'here'), published: () => true });
    expect(t.r.calls.claims).toEqual([]);
    expect(await t.merge()).toBe('there');
    expect(t.sent).toEqual([other.url]);
  });

  it('reads a record again only once RECORD_TTL_MS passed', async () => {
    const t = forwarding(other);
    await t.merge();
    await t.merge();
    expect(t.r.calls.reads).toBe(1);
    t.r.set(mine);
    t.clock.now += RECORD_TTL_MS + 1;
    expect(await t.merge()).toBe('here');
    expect(t.r.calls.reads).toBe(2);
  });

  it('a publisher that cannot be connected to is gone: the merge runs here and then claims the branch over its record', async () => {
    const refused = new BranchgraphError('server_unreachable', 'refused', { details: { url: other.url, sent: false } });
    const t = forwarding(other, async () => Promise.reject(refused));
    expect(await t.merge()).toBe('here');
    expect(t.r.calls.claims).toEqual([mine]);
    // A record naming the gone process again is not believed until GONE_MS passed.
    t.r.set(other);
    t.clock.now += RECORD_TTL_MS + 1;
    expect(await t.merge()).toBe('here');
    expect(t.sent).toEqual([other.url]);
    t.clock.now += GONE_MS;
    t.r.set(other);
    await t.merge();
    expect(t.sent).toEqual([other.url, other.url]);
  });

  it('a publisher that stopped answering after the merge was sent: publisher_unreachable, nothing run here or claimed', async () => {
    const broken = new BranchgraphError('server_unreachable', 'reset', { details: { url: other.url, sent: true } });
    const t = forwarding(other, async () => Promise.reject(broken));
    await expect(t.merge()).rejects.toMatchObject({
      code: 'publisher_unreachable',
      retryable: true,
      details: { branch: 'main', url: other.url },
    });
    expect(t.ran()).toBe(0);
    expect(t.r.calls.claims).toEqual([]);
  });

  it("relays the publisher's own refusals as they are", async () => {
    const protectedBranch = new BranchgraphError('branch_protected', 'protected');
    const t = forwarding(other, async () => Promise.reject(protectedBranch));
    await expect(t.merge()).rejects.toBe(protectedBranch);
    expect(t.ran()).toBe(0);
  });
});
