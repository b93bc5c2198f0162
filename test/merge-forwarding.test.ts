/**
 * Merges into one branch through two servers of one graph: the second
 * forwards them to the server that publishes the branch, as the caller, and
 * takes the branch over when that server is gone (service/merge-forwarding.ts).
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BranchPublishers } from '../src/graph/branch-publishers.js';
import { RestClient } from '../src/http/rest-client.js';
import { FORWARDED_HEADER } from '../src/service/merge-forwarding.js';
import { FsStore } from '../src/store/fs-store.js';
import { testServer, type TestServer } from './support/test-server.js';

const TOKENS = 'admin:ta-secret-1:ops,write:tw-secret-1:writer-bot,read:tr-secret-1:reader';
const SCHEMA = 'node P { id: string @key\n v: int? }';

/** The merges each server ran itself, from its log. */
const mergesRun = (s: TestServer) => s.logs.filter((l) => l.msg === 'merge finished').length;

describe('merges forwarded to the branch publisher', () => {
  let dir: string;
  let servers: TestServer[];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bg-forward-'));
    servers = [];
  });
  afterEach(async () => {
    for (const s of servers) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function server(shard: string): Promise<TestServer> {
    const s = await testServer({
      store: `file://${path.join(dir, 'data')}`,
      tokens: TOKENS,
      env: { BRANCHGRAPH_SHARD: shard, BRANCHGRAPH_ADVERTISE_URL: 'http://127.0.0.1:{port}' },
    });
    servers.push(s);
    return s;
  }

  /** main with one row, `n` branches each adding one, and main moved on (so each merge is a merge). */
  async function branches(api: RestClient, n: number): Promise<void> {
    await new RestClient(api.baseUrl, 'ta-secret-1').applySchema({ branch: 'main', schema: SCHEMA });
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'root' } }] });
    for (let i = 0; i < n; i++) {
      await api.createBranch({ name: `b${i}`, from: 'main' });
      await api.write({ branch: `b${i}`, ops: [{ op: 'insert', table: 'P', values: { id: `p${i}` } }] });
    }
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'later' } }] });
  }

  it('run at the server that claimed the branch, as their caller, each its own commit', async () => {
    const a = await server('a');
    const b = await server('b');
    const viaA = new RestClient(a.url, 'tw-secret-1');
    const viaB = new RestClient(b.url, 'tw-secret-1');
    await branches(viaA, 5);
    // The first merge into main claims it for the server that ran it.
    expect(await viaA.mergeBranch({ source: 'b0' })).toMatchObject({ status: 'success', outcome: 'merged' });
    const record = await new BranchPublishers(new FsStore(path.join(dir, 'data'))).read('main');
    expect(record).toMatchObject({ branch: 'main', writer: { id: 'a' }, url: a.url });
    const results = await Promise.all([1, 2, 3, 4].map((i) => viaB.mergeBranch({ source: `b${i}` })));
    for (const r of results) expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
    // B forwarded all four: A ran five merges, B none.
    expect(mergesRun(a)).toBe(5);
    expect(mergesRun(b)).toBe(0);
    const log = await viaB.log({ at: 'main', firstParent: true, limit: 10 });
    const merges = log.commits.filter((c) => c.kind === 'merge');
    expect(merges).toHaveLength(5);
    // Committed as the caller's identity, whichever server it reached.
    for (const c of merges) expect(c.actor).toBe('writer-bot');
    const rows = await viaB.lookupRows({ at: 'main', table: 'P', keys: ['p0', 'p1', 'p2', 'p3', 'p4'] });
    expect(rows.items.every((x) => x !== null)).toBe(true);
  });

  it('are refused at the server they reached when the caller may not write there: nothing is forwarded', async () => {
    const a = await server('a');
    const b = await server('b');
    await branches(new RestClient(a.url, 'tw-secret-1'), 2);
    await new RestClient(a.url, 'tw-secret-1').mergeBranch({ source: 'b0' });
    await expect(new RestClient(b.url, 'tr-secret-1').mergeBranch({ source: 'b1' })).rejects.toMatchObject({ code: 'forbidden' });
    expect(mergesRun(a)).toBe(1);
  });

  it('a dry run and a merge already forwarded run where they arrive', async () => {
    const a = await server('a');
    const b = await server('b');
    await branches(new RestClient(a.url, 'tw-secret-1'), 3);
    await new RestClient(a.url, 'tw-secret-1').mergeBranch({ source: 'b0' });
    expect(await new RestClient(b.url, 'tw-secret-1').mergeBranch({ source: 'b1', dryRun: true })).toMatchObject({ status: 'success' });
    const forwarded = new RestClient(b.url, 'tw-secret-1', { [FORWARDED_HEADER]: '1' });
    expect(await forwarded.mergeBranch({ source: 'b2' })).toMatchObject({ status: 'success', outcome: 'merged' });
    expect(mergesRun(b)).toBe(2);
    expect(mergesRun(a)).toBe(1);
  });

  it('when the publisher is gone, the server the merge reached claims the branch and runs it', async () => {
    const a = await server('a');
    const b = await server('b');
    const viaB = new RestClient(b.url, 'tw-secret-1');
    await branches(new RestClient(a.url, 'tw-secret-1'), 3);
    await new RestClient(a.url, 'tw-secret-1').mergeBranch({ source: 'b0' });
    await a.close();
    servers.splice(servers.indexOf(a), 1);
    expect(await viaB.mergeBranch({ source: 'b1' })).toMatchObject({ status: 'success', outcome: 'merged' });
    expect(mergesRun(b)).toBe(1);
    expect(await new BranchPublishers(new FsStore(path.join(dir, 'data'))).read('main')).toMatchObject({ writer: { id: 'b' } });
    // And later merges run there without trying the gone server again.
    expect(await viaB.mergeBranch({ source: 'b2' })).toMatchObject({ status: 'success', outcome: 'merged' });
    expect(mergesRun(b)).toBe(2);
  });

  it('a publisher that drops the connection after the merge was sent: publisher_unreachable, retryable, and nothing ran here', async () => {
    const b = await server('b');
    const viaB = new RestClient(b.url, 'tw-secret-1');
    await branches(viaB, 1);
    // A "publisher" that takes the request and hangs up without answering.
    const dropper: Server = createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}`;
      await new BranchPublishers(new FsStore(path.join(dir, 'data'))).claim(
        { branch: 'main', writer: { id: 'x', incarnation: 'x1' }, url },
        { over: true },
      );
      const before = (await viaB.log({ at: 'main', limit: 1 })).commits[0]?.id;
      await expect(viaB.mergeBranch({ source: 'b0' })).rejects.toMatchObject({
        code: 'publisher_unreachable',
        retryable: true,
        details: { branch: 'main', url, status: 503 },
      });
      expect(mergesRun(b)).toBe(0);
      expect((await viaB.log({ at: 'main', limit: 1 })).commits[0]?.id).toBe(before);
    } finally {
      await new Promise((r) => dropper.close(r));
    }
  });
});
