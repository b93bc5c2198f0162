/**
 * Cloning a graph: every object of a graph in one store (a directory, a
 * bucket) copied into another, so the destination is the same graph, with
 * the same branches, tags, history, commit ids and rows.
 *
 * - What is copied: the content (manifests, their parts, the commit index,
 *   schemas, runs, pending WAL generations) and then the refs (tags, then
 *   branch records), as the refs stood when the clone began. The source may
 *   be written to meanwhile: referring objects are listed before the
 *   objects they refer to, and the refs before all of them. Hints are caches and are rebuilt; events, merge
 *   requests, hooks, idempotency records and tokens belong to the server
 *   that serves a graph, not to the graph, and stay behind.
 * - Refs move last, each create-only, a branch's records oldest first: until
 *   the first ref lands the destination holds no graph a reader can open;
 *   from then on every ref it holds names only objects that are there (a
 *   branch at a state it had in the source), and once the last one lands it
 *   holds all of it. A clone that stops part-way (a crash, an abort, a lost
 *   connection) is finished by running it again: it copies only what the
 *   destination lacks.
 * - What the destination lacks is found by walking the two stores' sorted
 *   listings of each prefix side by side, one pass each, never a request
 *   per object. A destination holding a ref the source does not hold as it
 *   is (another graph, or a clone that has moved on) is refused.
 * - Each object is checked as it arrives (object-check.ts) and written
 *   create-only, at most `width` at a time, so memory holds at most `width`
 *   objects whatever the graph's size.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { getIfPresent, listAll, type ObjectInfo, type ObjectStore } from '../store/object-store.js';
import { checkObject } from './object-check.js';

/**
 * The graph's content, copied before any ref, referring objects before referred ones: everything a
 * manifest names was written before the manifest was published, so a listing taken after the
 * manifests' finds it, even while the source is written to.
 */
const CONTENT_PREFIXES = ['manifests/', 'parts/', 'commits/', 'schemas/', 'runs/', 'wal/'] as const;
/** The refs, copied last: tags, then branch records. */
const REF_PREFIXES = ['tags/', 'branches/'] as const;

export interface CloneReport {
  /** Objects copied, and their bytes. */
  objects: number;
  bytes: number;
  /** Objects the destination held already (a resumed clone). */
  present: number;
  /** Branch records and tags copied. */
  branchRecords: number;
  tags: number;
}

/** How far a clone has come: objects and bytes copied or found present. */
export type CloneProgress = (p: { objects: number; bytes: number; prefix: string }) => void;

export async function cloneGraph(a: {
  source: ObjectStore;
  destination: ObjectStore;
  width?: number;
  signal?: AbortSignal;
  progress?: CloneProgress;
}): Promise<CloneReport> {
  const { source, destination, signal } = a;
  const width = Math.max(1, a.width ?? 8);
  await refuseOtherGraph({ source, destination, signal });
  const report: CloneReport = { objects: 0, bytes: 0, present: 0, branchRecords: 0, tags: 0 };
  // The refs as they are now, before any content is listed: each names only objects that exist
  // now, which the content listings below all find. Refs written during the clone wait for the next.
  const refs = new Map<string, ObjectInfo[]>();
  for (const prefix of REF_PREFIXES) refs.set(prefix, await listAll(source, prefix, { signal }));
  for (const prefix of [...CONTENT_PREFIXES, ...REF_PREFIXES]) {
    const copy = async (o: ObjectInfo): Promise<void> => {
      const bytes = await source.get(o.key, { signal });
      checkObject(o.key, bytes);
      try {
        await destination.putIfAbsent(o.key, bytes, { signal });
      } catch (e) {
        if (!isBranchgraphError(e, 'object_exists')) throw e;
        // Another clone of the same source got there first, and an immutable object is the same
        // wherever it lands; one of another size is not this graph's.
        if ((await destination.head(o.key, { signal }))?.size !== bytes.byteLength)
          throw new BranchgraphError('corrupt_object', `the destination holds another object at ${o.key}`, { details: { key: o.key } });
      }
      report.objects++;
      report.bytes += bytes.byteLength;
      if (prefix === 'branches/') report.branchRecords++;
      if (prefix === 'tags/') report.tags++;
      a.progress?.({ objects: report.objects + report.present, bytes: report.bytes, prefix });
    };
    // Branch records go in key order, one at a time: a branch's records land oldest first.
    const listed = refs.get(prefix) ?? source.list(prefix, { signal });
    await pool(missing({ listed, destination, prefix, signal, report }), prefix === 'branches/' ? 1 : width, copy);
  }
  return report;
}

/** The source's objects under `prefix` that the destination lacks, from both sorted listings walked together. */
async function* missing(a: {
  listed: AsyncIterable<ObjectInfo> | Iterable<ObjectInfo>;
  destination: ObjectStore;
  prefix: string;
  signal?: AbortSignal | undefined;
  report: CloneReport;
}): AsyncGenerator<ObjectInfo> {
  const held = a.destination.list(a.prefix, { signal: a.signal })[Symbol.asyncIterator]();
  let next = await held.next();
  for await (const o of a.listed) {
    while (!next.done && next.value.key < o.key) next = await held.next();
    // A key the destination holds at the same size is what an earlier run of this clone wrote.
    if (!next.done && next.value.key === o.key && next.value.size === o.size) a.report.present++;
    else yield o;
  }
}

/**
 * Refuse a destination that holds refs the source does not hold as they are: another graph, or
 * one that moved on since it was cloned. Refs a cut clone of this very source left (each the same
 * object in the source) are resumed over.
 */
async function refuseOtherGraph(a: { source: ObjectStore; destination: ObjectStore; signal?: AbortSignal | undefined }): Promise<void> {
  const { source, destination, signal } = a;
  for (const prefix of REF_PREFIXES)
    for await (const o of destination.list(prefix, { signal })) {
      const [mine, theirs] = await Promise.all([destination.get(o.key, { signal }), getIfPresent(source, o.key, { signal })]);
      if (theirs === undefined || Buffer.compare(Buffer.from(mine), Buffer.from(theirs)) !== 0)
        throw new BranchgraphError(
          'invalid_input',
          `the destination already holds another graph (${o.key} is not the source's): clone into an empty store`,
          { issues: [{ path: o.key, message: 'not the source object of that key' }] },
        );
    }
}

/** Run `work` on every item of `items`, at most `width` at once; the first failure stops the rest. */
async function pool<T>(items: AsyncIterable<T>, width: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: unknown;
  for await (const item of items) {
    if (failure !== undefined) break;
    const p = work(item).catch((e: unknown) => {
      failure ??= e;
    });
    running.add(p);
    void p.finally(() => running.delete(p));
    if (running.size >= width) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
}
