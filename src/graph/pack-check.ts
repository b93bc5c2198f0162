/**
 * Checking a pushed pack before any of it is written: the objects a client
 * sent to move a branch of this graph, judged as the graph would read them
 * once written. A pack that fails any check is refused whole and nothing is
 * stored; one that passes is a transfer plan (graph/transfer.ts) whose
 * objects are then written in the safe order.
 *
 * - Keys: only content (`runs/`, `parts/`, `commits/`, `schemas/`,
 *   `manifests/`), each well-formed and inside the graph's own layout: no
 *   refs, no `..`, nothing another graph's prefix could mean.
 * - Each object's form (object-check.ts); a run's bytes against the
 *   checksum the manifest naming it records; a schema against its address.
 * - A key this store holds must hold the same bytes (objects are immutable).
 * - Manifests: each decodes through the pack laid over the store (its parts
 *   and schema resolve), names the lineage and version of its key, has its
 *   parents (in the pack or held), follows its lineage's previous version,
 *   and carries exactly the ancestry its parents give it, so a forged claim
 *   to contain a head cannot pass the fast-forward check. No pushed manifest
 *   is a version of a lineage a branch of this graph writes: that would
 *   move the branch without its ref.
 * - Every object a pushed manifest names is in the pack or held here, and
 *   each pushed commit index entry names the manifest of that commit.
 * - Every row of a pushed run the pushed head reads holds to its table's
 *   type in the head's schema, as a write's rows must.
 * - The pushed commit resolves to a manifest in the pack or held.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { mapLimit } from '../model/map-limit.js';
import { Slice } from '../model/turns.js';
import { checkRow } from '../model/values.js';
import { OverlayStore } from '../store/overlay-store.js';
import { verifyChecksum } from '../table/run.js';
import { Ancestry } from './ancestry.js';
import { Graph } from './graph.js';
import { keys, parseKey } from './keys.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { Snapshot } from './snapshot.js';
import { checkObject } from './object-check.js';
import { runChecksums, type TransferPlan } from './transfer.js';

const CONTENT = ['runs/', 'parts/', 'commits/', 'schemas/', 'manifests/'] as const;
/** Store calls the check has in flight at once. */
const STORE_WIDTH = 16;

/** A pack that passed: what to write, and the overlay graph to send it from. */
export interface CheckedPack {
  plan: TransferPlan;
  source: Graph;
}

export async function checkPack(
  graph: Graph,
  a: { objects: ReadonlyMap<string, Uint8Array>; to: string; signal?: AbortSignal | undefined },
): Promise<CheckedPack> {
  try {
    return await checked(graph, a);
  } catch (e) {
    // A pushed object that is not what it says is the pusher's mistake, not this store's damage.
    const key = isBranchgraphError(e, 'corrupt_object') ? (e.details as { key?: string }).key : undefined;
    if (key !== undefined && a.objects.has(key))
      throw new BranchgraphError('invalid_input', `refused push: ${(e as Error).message}`, { issues: [{ path: key, message: 'corrupt' }] });
    throw e;
  }
}

async function checked(
  graph: Graph,
  a: { objects: ReadonlyMap<string, Uint8Array>; to: string; signal?: AbortSignal | undefined },
): Promise<CheckedPack> {
  const { objects, signal } = a;
  const refuse = (key: string, why: string): BranchgraphError =>
    new BranchgraphError('invalid_input', `refused push: ${key}: ${why}`, { issues: [{ path: key, message: why }] });
  const held = await checkObjects(graph, { objects, refuse, signal });
  const source = Graph.attach(new OverlayStore(graph.store, objects), { actor: graph.actor });
  const pushed: Manifest[] = [];
  for (const key of objects.keys()) {
    const k = parseKey(key);
    if (k?.kind !== 'manifest') continue;
    const m = await source.snapshotAt({ lineage: k.lineage, version: k.version }, signal).then(
      (s) => s.manifest,
      (e: unknown) => {
        throw isBranchgraphError(e) && e.code !== 'aborted' ? refuse(key, `does not read as a manifest (${e.message})`) : e;
      },
    );
    if (m.lineage !== k.lineage || m.version !== k.version) throw refuse(key, 'names another lineage or version than its key');
    pushed.push(m);
  }
  const written = new Set((await graph.branchRecords(() => true, signal)).map((r) => r.lineage));
  for (const m of pushed) {
    const key = keys.manifest(m.lineage, m.version);
    if (!held.has(key) && written.has(m.lineage)) throw refuse(key, 'a new version of a lineage a branch here writes');
    await checkLineage(source, m, { refuse: (why) => refuse(key, why), signal });
  }
  // Every object the pushed manifests name is here once the pack is: in it, or held.
  const named = await source.objectsNamedBy(pushed, signal);
  await mapLimit([...named], STORE_WIDTH, async (key) => {
    if (!objects.has(key) && (await graph.store.head(key, { signal })) === undefined)
      throw refuse(key, 'named by a pushed manifest, and neither pushed nor held');
  });
  const slice = new Slice();
  for (const [key, run] of runChecksums(pushed)) {
    const bytes = objects.get(key);
    if (bytes === undefined) continue;
    verifyChecksum(run, bytes);
    if (slice.due()) await slice.turn();
  }
  for (const key of objects.keys()) {
    const k = parseKey(key);
    if (k?.kind !== 'commit') continue;
    const at = await source.commitSnapshot(k.id, signal).catch(() => undefined);
    if (at === undefined) throw refuse(key, 'names no manifest of that commit');
  }
  const head = await source.commitSnapshot(a.to, signal).catch((e: unknown) => {
    throw isBranchgraphError(e, 'not_found') ? refuse(`commits/${a.to}.json`, 'the pushed commit is neither pushed nor held') : e;
  });
  await checkPushedRows({ head, objects, source, refuse, signal });
  const content = [...objects.keys()].filter((k) => !held.has(k) && !k.startsWith('manifests/')).sort();
  const fresh = pushed.filter((m) => !held.has(keys.manifest(m.lineage, m.version)));
  return { plan: { content, manifests: fresh }, source };
}

/**
 * Each pushed object on its own: a content key of the layout, well-formed, and, where this store
 * already holds the key, the very bytes it holds. Returns the keys held (they are not written again).
 */
async function checkObjects(
  graph: Graph,
  a: { objects: ReadonlyMap<string, Uint8Array>; refuse: (key: string, why: string) => BranchgraphError; signal: AbortSignal | undefined },
): Promise<Set<string>> {
  const { objects, refuse, signal } = a;
  const slice = new Slice();
  for (const [key, bytes] of objects) {
    if (!CONTENT.some((p) => key.startsWith(p)) || !safeKey(key)) throw refuse(key, 'not a content key of this graph');
    if (!key.startsWith('schemas/') && parseKey(key) === undefined) throw refuse(key, 'not a key of the layout');
    checkObject(key, bytes);
    // A big pack is checked in slices: the loop serves other requests meanwhile.
    if (slice.due()) await slice.turn();
  }
  const held = new Set<string>();
  await mapLimit([...objects], STORE_WIDTH, async ([key, bytes]) => {
    const info = await graph.store.head(key, { signal });
    if (info === undefined) return;
    if (info.size !== bytes.byteLength || Buffer.compare(Buffer.from(await graph.store.get(key, { signal })), Buffer.from(bytes)) !== 0)
      throw refuse(key, 'held here with other bytes');
    held.add(key);
  });
  return held;
}

/**
 * A manifest's place in history: what it builds on exists, it follows its lineage, and its
 * ancestry is the one that gives it. A commit builds on its first parent (its lineage's previous
 * version, or the fork point for a lineage's first); a re-laid version (a compaction) builds on
 * its lineage's previous version, or, first on its lineage, on the version whose commit it re-lays,
 * and carries that commit unchanged.
 */
async function checkLineage(
  source: Graph,
  m: Manifest,
  opts: { refuse: (why: string) => BranchgraphError; signal: AbortSignal | undefined },
): Promise<void> {
  const { refuse, signal } = opts;
  const read = (r: ManifestRef): Promise<Manifest> =>
    source.snapshotAt(r, signal).then(
      (s) => s.manifest,
      () => {
        throw refuse(`it builds on ${r.lineage}/${r.version}, which is neither pushed nor held`);
      },
    );
  const previous = m.version > 1 ? { lineage: m.lineage, version: m.version - 1 } : undefined;
  let prev: Manifest | undefined;
  let second: Manifest | undefined;
  if (m.layout !== undefined) {
    const of = await read(m.layout.of);
    if (of.commit.id !== m.commit.id) throw refuse('re-lays a commit it does not carry');
    prev = previous !== undefined ? await read(previous) : of;
  } else {
    const [first, other, ...more] = m.commit.parents;
    if (more.length > 0) throw refuse('more than two parents');
    if (previous !== undefined && (first === undefined || !sameRef(first, previous)))
      throw refuse('its first parent is not the previous version of its lineage');
    prev = first !== undefined ? await read(first) : undefined;
    second = other !== undefined ? await read(other) : undefined;
  }
  const own = { lineage: m.lineage, version: m.version };
  const expected = prev === undefined ? Ancestry.of({}, own) : Ancestry.next(own, prev.ancestry, second?.ancestry);
  const a = new Map(m.ancestry.entries());
  const b = new Map(expected.entries());
  if (a.size !== b.size || [...a].some(([l, v]) => b.get(l) !== v)) throw refuse('its ancestry is not the one its parents give it');
}

/**
 * Every row of a pushed run the head reads holds to its table's type in the head's schema (types,
 * ranges, enums, required properties), as a write's rows must. Constraints across a table
 * (`@unique`, cardinality) are the pusher's schema's to keep; rows are read only from what was pushed.
 */
async function checkPushedRows(a: {
  head: Snapshot;
  objects: ReadonlyMap<string, Uint8Array>;
  source: Graph;
  refuse: (key: string, why: string) => BranchgraphError;
  signal: AbortSignal | undefined;
}): Promise<void> {
  const { head, objects, source } = a;
  const slice = new Slice();
  for (const name of Object.keys(head.tables)) {
    const view = source.ports.tables.table(head, name, a.signal);
    for (const run of view.version.runs) {
      if (!objects.has(run.key)) continue;
      const data = await view.load(run);
      for (let i = 0; i < data.length; i++) {
        const row = data.rowAt(i);
        if (row.tomb || row.props === null) continue;
        const { issues } = checkRow({ table: view.type, input: row.props, mode: 'full', path: `${name}/${row.key}` });
        if (issues.length > 0) throw a.refuse(run.key, `row ${row.key} breaks ${name}'s type: ${issues[0]?.message}`);
        if (slice.due()) await slice.turn();
      }
    }
  }
}

function sameRef(x: ManifestRef, y: ManifestRef): boolean {
  return x.lineage === y.lineage && x.version === y.version;
}

/** A key with no empty, `.` or `..` segment, no backslash and no control character. */
function safeKey(key: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  return !/[\\\u0000-\u001f]/.test(key) && key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}
