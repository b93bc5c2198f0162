import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Graph } from '../src/graph/graph.js';
import { RestClient } from '../src/http/rest-client.js';
import { allRows } from '../src/service/api.js';
import { BranchgraphService } from '../src/service/service.js';
import { listAll } from '../src/store/object-store.js';
import { mustWrite, PEOPLE_SCHEMA } from './support/fixtures.js';
import { gql, testServer } from './support/test-server.js';
import { embeddedApi } from '../src/service/api.js';

const TABLES = ['A', 'B', 'C', 'D', 'E', 'F'];

async function multiTable(g: Graph): Promise<void> {
  await g.applySchema('main', TABLES.map((t) => `node ${t} { id: string @key\n a: int\n b: int }`).join('\n'));
  for (const t of TABLES)
    await mustWrite(
      g,
      'main',
      [1, 2].map((i) => ({ op: 'insert' as const, table: t, values: { id: `r${i}`, a: 0, b: 0 } })),
    );
  await g.createBranch('f', { branch: 'main' });
  // Both sides change r1, each another property: every table's preparation merges it property by
  // property and writes the merged row, so preparation takes store round trips.
  for (const t of TABLES) {
    await mustWrite(g, 'f', [{ op: 'update', table: t, values: { id: 'r1', a: 1 } }]);
    await mustWrite(g, 'main', [{ op: 'update', table: t, values: { id: 'r1', b: 2 } }]);
  }
}

const MERGE_GQL = `mutation($source: String!, $input: MergeInput) {
  mergeBranch(source: $source, input: $input) {
    __typename
    ... on MergeSuccess { outcome commit { id message } summary { maxWidth requestedWidth } }
    ... on MergeConflicts { total counts { DivergentUpdate DivergentInsert } nextCursor conflicts { kind table key property base source target } summary { maxWidth } }
  }
}`;

describe('one merge handler for REST and GraphQL', () => {
  it('gives equal results for the same scenario', async () => {
    async function scenario(via: 'rest' | 'graphql') {
      const s = await testServer();
      const rest = new RestClient(s.url);
      await rest.applySchema({ branch: 'main', schema: PEOPLE_SCHEMA });
      await rest.write({
        branch: 'main',
        ops: [
          { op: 'insert', table: 'Person', values: { id: 'a', name: 'A', age: 1 } },
          { op: 'insert', table: 'Person', values: { id: 'b', name: 'B' } },
        ],
      });
      await rest.createBranch({ name: 'f' });
      await rest.write({
        branch: 'f',
        ops: [
          { op: 'update', table: 'Person', values: { id: 'a', age: 2 } },
          { op: 'insert', table: 'Person', values: { id: 'n', name: 'x' } },
        ],
      });
      await rest.write({
        branch: 'main',
        ops: [
          { op: 'update', table: 'Person', values: { id: 'a', age: 3 } },
          { op: 'insert', table: 'Person', values: { id: 'n', name: 'y' } },
        ],
      });
      const merge = async () => {
        if (via === 'rest') {
          const r = await rest.mergeBranch({ source: 'f' });
          return r.status === 'success'
            ? { kind: 'success', outcome: r.outcome }
            : { kind: 'conflicts', total: r.report.total, conflicts: r.report.items.map(({ message: _m, ...c }) => c) };
        }
        const r = (await gql(s.url, MERGE_GQL, { source: 'f' })).body.data?.mergeBranch as Record<string, any>;
        return r.__typename === 'MergeSuccess'
          ? { kind: 'success', outcome: r.outcome }
          : { kind: 'conflicts', total: r.total, conflicts: r.conflicts };
      };
      const first = await merge();
      await rest.write({
        branch: 'f',
        ops: [
          { op: 'update', table: 'Person', values: { id: 'a', age: 3 } },
          { op: 'upsert', table: 'Person', values: { id: 'n', name: 'y' } },
        ],
      });
      const second = await merge();
      const rows = await allRows(rest, 'Person', { branch: 'main' });
      await s.close();
      return { first, second, rows };
    }
    const viaRest = await scenario('rest');
    const viaGraphql = await scenario('graphql');
    expect(viaRest.first).toMatchObject({ kind: 'conflicts', total: 2 });
    expect(viaRest.second).toEqual({ kind: 'success', outcome: 'merged' });
    expect(viaGraphql).toEqual(viaRest);
  });

  it('caps HTTP merges at width one whatever the request asks; embedded callers may use four', async () => {
    for (const via of ['rest', 'graphql', 'embedded'] as const) {
      const s = await testServer();
      await multiTable(s.graph);
      let maxWidth: number;
      if (via === 'rest') maxWidth = (await new RestClient(s.url).mergeBranch({ source: 'f', width: 4 })).metrics.maxWidth;
      else if (via === 'graphql')
        maxWidth = (
          (await gql(s.url, MERGE_GQL, { source: 'f', input: { width: 4 } })).body.data as {
            mergeBranch: { summary: { maxWidth: number } };
          }
        ).mergeBranch.summary.maxWidth;
      else
        maxWidth = (await embeddedApi(new BranchgraphService(s.graph), { transport: 'embedded' }).mergeBranch({ source: 'f', width: 4 }))
          .metrics.maxWidth;
      expect([via, maxWidth]).toEqual([via, via === 'embedded' ? 4 : 1]);
      await s.close();
    }
  });
});

describe('client disconnects', () => {
  for (const via of ['rest', 'graphql'] as const) {
    it(`over ${via}: a socket destroyed mid-preparation drains, publishes nothing, removes scratch, logs the abort; a retry succeeds`, async () => {
      const s = await testServer({ latencyMs: 15 });
      const gauges = s.service.metrics.gauges;
      await multiTable(s.graph);
      // A cold server, as after a restart: the merge reads its runs through the slow store.
      s.graph.dropCaches();
      await s.service.idle();
      const before = (await listAll(s.store, '')).map((o) => o.key);
      const head = (await s.graph.branchHead('main')).manifest.commit.id;
      const { port } = new URL(s.url);
      const body = via === 'rest' ? '{}' : JSON.stringify({ query: MERGE_GQL, variables: { source: 'f' } });
      const path = via === 'rest' ? '/branches/f/merge' : '/graphql';
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // Wait until preparation is under way, then hang up.
      const t0 = Date.now();
      while (gauges.inFlight === 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 2));
      expect(gauges.inFlight).toBeGreaterThan(0);
      socket.destroy();
      const t1 = Date.now();
      while ((gauges.inFlight > 0 || gauges.pendingScratch > 0) && Date.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 5));
      // The handler returns only after draining; its request log line follows the response.
      const aborted = () => s.logs.some((l) => l.outcome === 'aborted' && String(l.msg).includes('aborted'));
      const t2 = Date.now();
      while (!aborted() && Date.now() - t2 < 10_000) await new Promise((r) => setTimeout(r, 5));
      await s.service.idle();
      expect(gauges).toMatchObject({ inFlight: 0, reservedBytes: 0, pendingScratch: 0 });
      expect((await s.graph.branchHead('main')).manifest.commit.id).toBe(head);
      expect((await listAll(s.store, '')).map((o) => o.key)).toEqual(before);
      expect(s.logs.some((l) => l.outcome === 'aborted' && String(l.msg).includes('aborted'))).toBe(true);
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(metrics).toMatch(/^branchgraph_preparations_in_flight 0$/m);
      const retry = await new RestClient(s.url).mergeBranch({ source: 'f' });
      expect(retry).toMatchObject({ status: 'success', outcome: 'merged' });
      await s.close();
    }, 60_000);
  }
});
