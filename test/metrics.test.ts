/**
 * `/metrics` as a Prometheus server and its operators use it: an exposition
 * promtool accepts, the latency histograms with observations in them, the
 * process metrics and build info, WAL pending gauges, GraphQL errors by code
 * (GraphQL answers them with HTTP 200), and merge log lines that name the
 * commit and both heads.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const promtool = spawnSync('promtool', ['--version']).status === 0;

describe('/metrics', () => {
  let s: TestServer;
  let text: string;
  beforeAll(async () => {
    s = await testServer();
    const rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: 'node Item { id: string @key\n v: int }' });
    await rest.createBranch({ name: 'f' });
    await rest.write({ branch: 'f', ops: [{ op: 'upsert', table: 'Item', values: { id: 'a', v: 1 } }] });
    await rest.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: 'b', v: 1 } }] });
    await rest.mergeBranch({ source: 'f' });
    await rest.ingest({ branch: 'main', ndjson: '{"table":"Item","values":{"id":"c","v":2}}\n' });
    await gql(s.url, 'query Broken { branch(name: "nope") { name } }');
    await gql(s.url, '{ nosuchfield }');
    text = await (await fetch(`${s.url}/metrics`)).text();
  });
  afterAll(async () => s.close());

  it.skipIf(!promtool && process.env.CI === undefined)('passes promtool check metrics', () => {
    // In CI promtool must be there (.ci/run installs it): a missing one fails here instead of skipping.
    const out = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(out.trim()).toBe('');
  });

  it('has latency histograms for requests, merges and store calls, with observations', () => {
    const count = (name: string, labels: string): number =>
      Number(new RegExp(`^${name}_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    expect(count('branchgraph_http_request_duration_seconds', 'method="POST",route="/branches/:id/merge"')).toBe(1);
    expect(count('branchgraph_merge_duration_seconds', 'outcome="merged"')).toBe(1);
    expect(count('branchgraph_store_call_duration_seconds', 'op="putIfAbsent",outcome="ok"')).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE branchgraph_catchup_duration_seconds histogram$/m);
    expect(text).toMatch(
      /^branchgraph_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/branches"\}|^branchgraph_http_request_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/branches\/:id\/merge"\} 1$/m,
    );
  });

  it('has process metrics, build info and the WAL pending gauge', () => {
    expect(text).toMatch(/^branchgraph_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^branchgraph_nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^branchgraph_build_info\{version="\d+\.\d+\.\d+",node="v\d+[^"]*"\} 1$/m);
    expect(text).toMatch(/^branchgraph_wal_pending_generations\{branch="main"\} 1$/m);
    expect(text).toMatch(/^branchgraph_wal_generations_sealed_total 1$/m);
    // Long operations: none running once the requests returned, counted by kind.
    expect(text).toMatch(/^branchgraph_operations_running\{kind="merge"\} 0$/m);
    expect(text).toMatch(/^branchgraph_operation_rows_planned\{kind="load"\} 0$/m);
    expect(text).toMatch(/^branchgraph_operation_rows_done\{kind="merge"\} 0$/m);
  });

  it('regression: the WAL pending gauge drops the series of a deleted branch', async () => {
    const rest = new RestClient(s.url);
    await rest.createBranch({ name: 'gone' });
    await rest.ingest({ branch: 'gone', ndjson: '{"table":"Item","values":{"id":"g","v":1}}\n' });
    expect(await (await fetch(`${s.url}/metrics`)).text()).toMatch(/^branchgraph_wal_pending_generations\{branch="gone"\} 1$/m);
    await rest.deleteBranch({ name: 'gone' });
    expect(await (await fetch(`${s.url}/metrics`)).text()).not.toMatch(/branch="gone"/);
  });

  it('counts GraphQL errors by stable code', () => {
    expect(text).toMatch(/^branchgraph_graphql_errors_total\{code="not_found"\} 1$/m);
    expect(text).toMatch(/^branchgraph_graphql_errors_total\{code="invalid_input"\} 1$/m);
  });

  it('logs merges with the commit id and both heads, and GraphQL operations by name', () => {
    const line = s.logs.find((l) => l.msg === 'merge finished') as
      | { commit: string; sourceHead: string; targetHead: string; outcome: string }
      | undefined;
    expect(line).toMatchObject({ outcome: 'merged' });
    expect(line?.commit).toMatch(/^[0-9A-Z]{26}$/);
    expect(line?.sourceHead).toMatch(/^[0-9A-Z]{26}$/);
    expect(line?.targetHead).toMatch(/^[0-9A-Z]{26}$/);
    expect(s.logs.some((l) => l.msg === 'request' && l.graphqlOperation === 'Broken')).toBe(true);
  });
});
