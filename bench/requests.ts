/**
 * What a merge request adds to a merge, in a fresh process: the same
 * change (ROWS rows on a branch of a graph of 8 tables) merged into main
 * directly, and through a merge request into a protected main (open,
 * approve, merge), ROUNDS times each, alternating, on a local directory
 * with LATENCY ms per store call. Prints one JSON line: median store calls
 * and milliseconds per arm, and for the request the calls of each step.
 *
 *   tsx bench/requests.ts ROUNDS LATENCY ROWS
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const LATENCY = Number(process.argv[3] ?? 17);
const ROWS = Number(process.argv[4] ?? 100);
const TABLES = Array.from({ length: 8 }, (_, i) => `T${i}`);
const SCHEMA = TABLES.map((t) => `node ${t} { id: string @key\n v: int }`).join('\n');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-requests-'));
  const store = new CountingStore(new LatencyStore(new FsStore(dir), LATENCY));
  const service = await serviceOnStore(store, { actor: 'bench', shard: 'bench' });
  const author: BranchgraphApi = embeddedApi(service, { transport: 'embedded', actor: 'author' });
  const reviewer: BranchgraphApi = embeddedApi(service, { transport: 'embedded', actor: 'reviewer' });
  await author.applySchema({ branch: 'main', schema: SCHEMA });
  await author.write({ branch: 'main', ops: TABLES.map((t) => ({ op: 'upsert' as const, table: t, values: { id: 'seed', v: 0 } })) });
  const change = async (branch: string, round: number): Promise<void> => {
    await author.createBranch({ name: branch });
    const ops = Array.from({ length: ROWS }, (_, i) => ({
      op: 'upsert' as const,
      table: TABLES[i % 3] as string,
      values: { id: `${branch}-${i}`, v: round },
    }));
    await author.write({ branch, ops });
    // main moves too, so every merge is a three-way merge, not a fast-forward.
    await author.write({
      branch: 'main',
      ops: [{ op: 'upsert', table: 'T7', values: { id: `main-${branch}`, v: round } }],
      bypassProtection: true,
    });
  };
  const measure = async <T>(fn: () => Promise<T>): Promise<{ calls: number; ms: number }> => {
    store.reset();
    const t0 = performance.now();
    await fn();
    return { calls: store.snapshot().total.calls, ms: performance.now() - t0 };
  };
  await author.protectBranch({ name: 'main', requiredApprovals: 1, allowAdminBypass: true });
  const plain: { calls: number; ms: number }[] = [];
  const viaRequest: { calls: number; ms: number }[] = [];
  const steps: Record<'open' | 'review' | 'merge', number[]> = { open: [], review: [], merge: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const arms = [
      async () => {
        await change(`plain${r}`, r);
        plain.push(await measure(() => author.mergeBranch({ source: `plain${r}`, bypassProtection: true })));
      },
      async () => {
        await change(`req${r}`, r);
        let id = '';
        const open = await measure(async () => {
          id = (await author.openMergeRequest({ source: `req${r}`, title: `round ${r}` })).id;
        });
        const review = await measure(() => reviewer.reviewMergeRequest({ id, verdict: 'approve' }));
        const merge = await measure(() => author.mergeMergeRequest({ id }));
        steps.open.push(open.calls);
        steps.review.push(review.calls);
        steps.merge.push(merge.calls);
        viaRequest.push({ calls: open.calls + review.calls + merge.calls, ms: open.ms + review.ms + merge.ms });
        if (merge.calls === 0) throw new Error('the request did not merge');
      },
    ];
    for (const arm of r % 2 === 0 ? arms : [...arms].reverse()) await arm();
  }
  await service.close();
  await rm(dir, { recursive: true, force: true });
  const ms = (xs: { ms: number }[]) => Math.round(median(xs.map((x) => x.ms)) * 10) / 10;
  const calls = (xs: { calls: number }[]) => median(xs.map((x) => x.calls));
  process.stdout.write(
    `${JSON.stringify({
      rounds: ROUNDS,
      latencyMs: LATENCY,
      rows: ROWS,
      plain_merge_calls: calls(plain),
      plain_merge_ms: ms(plain),
      request_calls: calls(viaRequest),
      request_ms: ms(viaRequest),
      request_open_calls: median(steps.open),
      request_review_calls: median(steps.review),
      request_merge_calls: median(steps.merge),
      request_over_plain_ms: Math.round((ms(viaRequest) / ms(plain)) * 100) / 100,
      request_merge_step_over_plain_calls: Math.round((median(steps.merge) / calls(plain)) * 100) / 100,
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    })}\n`,
  );
}

await main();
