/**
 * Idempotent merges: a retried request with the same Idempotency-Key gets
 * the first result, whether the first response was lost, the record of it
 * was lost (a crash between the commit and the record), or the retry ran
 * at the same time; a different request under the key is refused, and GC
 * collects records once no lookup can reach them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitLog } from '../src/graph/commit-log.js';
import { serviceOnStore } from '../src/service/open-service.js';
import type { BranchgraphService } from '../src/service/service.js';
import type { MergeResultDto } from '../src/service/dtos.js';
import { FaultStore } from '../src/store/fault-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { ObjectStore } from '../src/store/object-store.js';
import { StoreWrapper, type CallContext } from '../src/store/store-wrapper.js';
import { cloneMemoryStore } from './support/stores.js';
import { IDEMPOTENCY_LIFETIME_MS } from '../src/graph/idempotency.js';
import { RestClient } from '../src/http/rest-client.js';
import { listAll } from '../src/store/object-store.js';
import { gql, testServer, type TestServer } from './support/test-server.js';
import { embeddedApi } from '../src/service/api.js';

/** Rounds of one key sent to two servers at once: twenty in npm test; CI runs a hundred (IDEMPOTENCY_ROUNDS). */
const ROUNDS = Number(process.env.IDEMPOTENCY_ROUNDS ?? 20);
describe('idempotent merges', () => {
  let s: TestServer;
  let rest: RestClient;
  let n = 0;
  beforeAll(async () => {
    s = await testServer();
    rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: 'node Item { id: string @key\n v: int }' });
  });
  afterAll(async () => s.close());

  /** A fresh branch with a change that merges into main, and main moved so the merge is a real one. */
  async function branchToMerge(): Promise<string> {
    const name = `b${++n}`;
    await rest.createBranch({ name });
    await rest.write({ branch: name, ops: [{ op: 'upsert', table: 'Item', values: { id: `${name}-x`, v: 1 } }] });
    await rest.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: `${name}-m`, v: 1 } }] });
    return name;
  }

  const mergeWithKey = (branch: string, key: string, body: Record<string, unknown> = {}) =>
    fetch(`${s.url}/branches/${branch}/merge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });

  it('a retry returns the first result, marked replayed, and merges nothing', async () => {
    const b = await branchToMerge();
    const first = await mergeWithKey(b, 'key-1', { message: 'land' });
    const firstBody = (await first.json()) as { outcome: string; commit: { id: string }; replayed?: boolean };
    expect([first.status, firstBody.outcome, firstBody.replayed, first.headers.get('idempotent-replayed')]).toEqual([
      200,
      'merged',
      undefined,
      null,
    ]);
    const head = (await rest.getBranch({ name: 'main' })).head.id;
    const again = await mergeWithKey(b, 'key-1', { message: 'land', width: 1 });
    const againBody = (await again.json()) as { outcome: string; commit: { id: string }; replayed?: boolean };
    expect([again.status, againBody.outcome, againBody.commit.id, againBody.replayed, again.headers.get('idempotent-replayed')]).toEqual([
      200,
      'merged',
      firstBody.commit.id,
      true,
      'true',
    ]);
    expect((await rest.getBranch({ name: 'main' })).head.id).toBe(head);
    // Without the key, the same request is an ordinary merge: already up to date.
    expect(await rest.mergeBranch({ source: b, message: 'land' })).toMatchObject({ outcome: 'already_up_to_date' });
  });

  it('refuses the key for a different request, and a malformed key, without merging', async () => {
    const b = await branchToMerge();
    await mergeWithKey(b, 'key-2');
    const other = await mergeWithKey(b, 'key-2', { message: 'something else' });
    expect([other.status, ((await other.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_input']);
    const bad = await mergeWithKey(await branchToMerge(), 'has space');
    expect([bad.status, ((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues[0]?.path]).toEqual([
      400,
      'body.idempotencyKey',
    ]);
  });

  it('finds the first merge by its commit when the record of it was lost', async () => {
    const b = await branchToMerge();
    const first = (await (await mergeWithKey(b, 'key-3')).json()) as { commit: { id: string } };
    const records = (await listAll(s.store, 'idempotency/')).map((o) => o.key).filter((k) => !k.includes('.started'));
    expect(records).toHaveLength(3);
    // The crash window: the commit landed, the record of it did not.
    await s.store.deleteMany(records);
    const again = (await (await mergeWithKey(b, 'key-3')).json()) as { commit: { id: string }; replayed: boolean; outcome: string };
    expect(again).toMatchObject({ replayed: true, outcome: 'merged', commit: { id: first.commit.id } });
  });

  it('concurrent retries with one key merge once', async () => {
    const b = await branchToMerge();
    const rs = await Promise.all([mergeWithKey(b, 'key-4'), mergeWithKey(b, 'key-4'), mergeWithKey(b, 'key-4')]);
    const bodies = (await Promise.all(rs.map((r) => r.json()))) as { commit: { id: string }; replayed?: boolean }[];
    expect(new Set(bodies.map((x) => x.commit.id)).size).toBe(1);
    expect(bodies.filter((x) => x.replayed === true)).toHaveLength(2);
    const merges = (await rest.log({ at: { branch: 'main' }, limit: 100 })).commits.filter(
      (c) => c.kind === 'merge' && c.message.includes(b),
    );
    expect(merges).toHaveLength(1);
  });

  it('GraphQL takes the key as an argument', async () => {
    const b = await branchToMerge();
    const q = `mutation { mergeBranch(source: "${b}", input: { idempotencyKey: "key-5" }) { ... on MergeSuccess { outcome replayed commit { id } } } }`;
    const one = (await gql(s.url, q)).body.data?.mergeBranch as { outcome: string; replayed: boolean; commit: { id: string } };
    const two = (await gql(s.url, q)).body.data?.mergeBranch as { outcome: string; replayed: boolean; commit: { id: string } };
    expect([one.outcome, one.replayed, two.replayed, two.commit.id]).toEqual(['merged', false, true, one.commit.id]);
  });

  it('GC deletes records only once no lookup can reach them', async () => {
    const kept = (await s.graph.gc({ dryRun: true })).deleted.idempotency;
    expect(kept).toBe(0);
    const later = await s.graph.gc({ dryRun: true, now: Date.now() + 2 * IDEMPOTENCY_LIFETIME_MS + 2 * 3600_000 });
    expect(later.deleted.idempotency).toBe((await listAll(s.store, 'idempotency/')).length);
  });
  it('regression: a keyed merge refused before it could publish leaves nothing stored, and the key still works', async () => {
    const b = await branchToMerge();
    const before = (await listAll(s.store, '')).map((o) => o.key);
    for (const body of [{ into: 'no-such-branch' }, { into: 'bad name!' }, { expectedSourceHead: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }]) {
      const r = await mergeWithKey(b, 'key-refused', body);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    // The refusals wrote no started marker (or anything else) under the key.
    expect((await listAll(s.store, '')).map((o) => o.key)).toEqual(before);
    const landed = (await (await mergeWithKey(b, 'key-refused')).json()) as { outcome: string };
    expect(landed.outcome).toBe('merged');
    expect((await listAll(s.store, 'idempotency/')).some((o) => o.key.endsWith('.started.json'))).toBe(true);
  });
});

describe('idempotent merges across two servers on one store', () => {
  let dir: string;
  let servers: TestServer[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bg-idem-'));
    servers = [await testServer({ store: `file://${dir}` }), await testServer({ store: `file://${dir}` })];
    await new RestClient(servers[0]?.url as string).applySchema({ branch: 'main', schema: 'node Item { id: string @key\n v: int }' });
  });
  afterAll(async () => {
    await Promise.all(servers.map((x) => x.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it(`regression: one key sent at once to both, ${ROUNDS} rounds: exactly one merge commit, and every response is it, the replays marked`, async () => {
    const [a, b] = servers.map((x) => new RestClient(x.url)) as [RestClient, RestClient];
    for (let round = 0; round < ROUNDS; round++) {
      const name = `x${round}`;
      await a.createBranch({ name });
      await b.write({ branch: name, ops: [{ op: 'upsert', table: 'Item', values: { id: `${name}-x`, v: 1 } }] });
      await a.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: `${name}-m`, v: 1 } }] });
      const key = `round-${round}`;
      // Alternate which server hears first, and sometimes send a third copy, so the interleavings vary.
      const targets = round % 2 === 0 ? servers : [...servers].reverse();
      const sends = [...targets, ...(round % 5 === 0 ? [servers[0] as TestServer] : [])].map((x) =>
        fetch(`${x.url}/branches/${name}/merge`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: '{}',
        }),
      );
      const bodies = (await Promise.all((await Promise.all(sends)).map((r) => r.json()))) as {
        outcome: string;
        commit: { id: string } | null;
        replayed?: boolean;
      }[];
      const merges = (await a.log({ at: { branch: 'main' }, limit: 20 })).commits.filter(
        (c) => c.kind === 'merge' && c.message === `merge ${name} into main`,
      );
      expect(merges, `round ${round}`).toHaveLength(1);
      for (const body of bodies) expect(body, `round ${round}`).toMatchObject({ outcome: 'merged', commit: { id: merges[0]?.id } });
      expect(
        bodies.filter((x) => x.replayed !== true),
        `round ${round}`,
      ).toHaveLength(1);
    }
  });
});

describe('a keyed retry that loses its race', () => {
  it('regression: to a commit under its key that pinned an older source, with another commit on top, replays it instead of merging again', async () => {
    const ctx = { transport: 'embedded' as const, actor: 't' };
    const inner = new MemoryStore();
    /** A store whose next manifest PUT waits until `release` is called. */
    class Gated extends StoreWrapper {
      private gate: Promise<void> | undefined;
      release: () => void = () => undefined;
      arm(): void {
        this.gate = new Promise((resolve) => {
          this.release = resolve;
        });
      }
      get waiting(): boolean {
        return this.gate === undefined;
      }
      protected async around<T>(c: CallContext, call: () => Promise<T>): Promise<T> {
        if (this.gate !== undefined && c.op === 'putIfAbsent' && c.key.startsWith('manifests/')) {
          const g = this.gate;
          this.gate = undefined;
          await g;
        }
        return call();
      }
    }
    const setup = await serviceOnStore(inner, { actor: 't', shard: 's' });
    const [ga, gb] = [new Gated(inner), new Gated(inner)];
    const [a, b] = [await serviceOnStore(ga, { actor: 't', shard: 'a' }), await serviceOnStore(gb, { actor: 't', shard: 'b' })];
    await embeddedApi(setup, ctx).applySchema({ branch: 'main', schema: 'node Item { id: string @key\n v: int }' });
    await embeddedApi(setup, ctx).createBranch({ name: 'f' });
    await embeddedApi(setup, ctx).write({ branch: 'f', ops: [{ op: 'upsert', table: 'Item', values: { id: 'a', v: 1 } }] });
    await embeddedApi(setup, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: 'b', v: 1 } }] });
    const input = { idempotencyKey: 'raced', message: 'keyed' };
    /** Start a keyed merge and wait until it stalls at its publication; the merge itself is returned unawaited. */
    const stalled = async (g: Gated, s: BranchgraphService): Promise<{ merge: Promise<MergeResultDto> }> => {
      g.arm();
      const merge = embeddedApi(s, ctx).mergeBranch({ source: 'f', ...input });
      while (!g.waiting) await new Promise((r) => setTimeout(r, 1));
      return { merge };
    };
    // The first attempt pins the source as it is and stalls; the source moves; the retry pins the newer source and stalls.
    const first = await stalled(ga, a);
    await embeddedApi(setup, ctx).write({ branch: 'f', ops: [{ op: 'upsert', table: 'Item', values: { id: 'later', v: 1 } }] });
    const retry = await stalled(gb, b);
    ga.release();
    const landed = await first.merge;
    // Another commit lands on the target above the keyed one before the retry publishes.
    await embeddedApi(setup, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: 'c', v: 1 } }] });
    gb.release();
    const r = await retry.merge;
    expect(landed).toMatchObject({ status: 'success', outcome: 'merged' });
    expect(r).toMatchObject({
      status: 'success',
      outcome: 'merged',
      replayed: true,
      commit: { id: landed.status === 'success' ? landed.commit?.id : 'none' },
    });
    const merges = (await commitLog(setup.graph.ports.manifests, await setup.graph.branchHead('main'), { limit: 20 })).filter(
      (c) => c.kind === 'merge',
    );
    expect(merges).toHaveLength(1);
  });
});

describe('idempotent merges under crashes', () => {
  it('a keyed merge crashed at any store call, then retried with its key, lands exactly once and returns that commit', async () => {
    const initial = new MemoryStore();
    const ctx = { transport: 'embedded' as const };
    const open = (store: ObjectStore) => serviceOnStore(store, { actor: 't', shard: 's' });
    const setup = await open(initial);
    await embeddedApi(setup, ctx).applySchema({ branch: 'main', schema: 'node Item { id: string @key\n v: int }' });
    await embeddedApi(setup, ctx).createBranch({ name: 'f' });
    await embeddedApi(setup, ctx).write({ branch: 'f', ops: [{ op: 'upsert', table: 'Item', values: { id: 'a', v: 1 } }] });
    await embeddedApi(setup, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: 'b', v: 1 } }] });
    const input = { idempotencyKey: 'crash-key', message: 'keyed' };
    // Calls are counted from the merge on: the service is opened first.
    const counter = new FaultStore(await cloneMemoryStore(initial));
    const counted = await open(counter);
    const opening = counter.callCount;
    await embeddedApi(counted, ctx).mergeBranch({ source: 'f', ...input });
    let landedBeforeRetry = 0;
    for (let k = opening + 1; k <= counter.callCount; k++) {
      for (const crashEffect of ['before', 'after'] as const) {
        const inner = await cloneMemoryStore(initial);
        const fault = new FaultStore(inner);
        const doomed = await open(fault);
        fault.setSchedule({ crashAtCall: k, crashEffect });
        await embeddedApi(doomed, ctx)
          .mergeBranch({ source: 'f', ...input })
          .catch((e: unknown) => expect(e).toMatchObject({ code: 'store_crashed' }));
        // Restart, and retry as a client whose response was lost would.
        const service = await open(inner);
        const keyed = async () =>
          (await commitLog(service.graph.ports.manifests, await service.graph.branchHead('main'), { limit: 50 })).filter(
            (c) => c.idempotency !== undefined,
          );
        const before = await keyed();
        if (before.length > 0) landedBeforeRetry++;
        const r = await embeddedApi(service, ctx).mergeBranch({ source: 'f', ...input });
        expect(r.status === 'success' && r.outcome, `crash at ${k} (${crashEffect})`).toBe('merged');
        const after = await keyed();
        expect(
          after.map((c) => c.message),
          `crash at ${k} (${crashEffect})`,
        ).toEqual(['keyed']);
        expect(r.status === 'success' && r.commit?.id).toBe(after[0]?.id);
        expect(r.status === 'success' && r.replayed === true).toBe(before.length > 0);
      }
    }
    // Some crashes struck after the commit landed: those retries were replays, not second merges or "up to date".
    expect(landedBeforeRetry).toBeGreaterThan(0);
  });
});
